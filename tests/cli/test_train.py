"""``ludwig-nb train``, ``evaluate`` and ``predict`` end to end, and their error exits."""

import json

import pandas as pd

from ludwig_nb.cli import main
from tests.cli.conftest import CONFIG


def test_train_then_evaluate_then_predict(files, capsys):
    tmp, config, data = files
    out = tmp / "results"
    code = main(["train", "-c", str(config), "-d", str(data), "-o", str(out), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0 and printed.startswith("completed: 56/56 steps")  # 210 train rows / 32 x 8
    assert "metrics (best, step " in printed
    header = next(line for line in printed.splitlines() if line.startswith("feature"))
    assert header.split() == [
        "feature",
        "metric",
        "training",
        "validation",
        "test",
        "trivial",
        "baseline",
        "(test)",
    ]
    accuracy = next(line for line in printed.splitlines() if line.split()[:2] == ["y", "accuracy"])
    assert "always 'False': " in accuracy  # the majority of the training split
    (run_dir,) = out.iterdir()
    assert (run_dir / "model").is_dir() and (run_dir / "events.ndjson").is_file()

    assert main(["evaluate", "-m", str(run_dir), "-d", str(data), "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert 0.5 < metrics["y"]["accuracy"] <= 1.0

    predictions = tmp / "p.csv"
    assert main(["predict", "-m", str(run_dir), "-d", str(data), "--output", str(predictions)]) == 0
    assert "y_predictions" in pd.read_csv(predictions).columns


def test_a_config_mistake_exits_2_with_the_located_message(files, capsys):
    tmp, config, data = files
    config.write_text(CONFIG.replace("epochs:", "epoch:"))
    assert main(["train", "-c", str(config), "-d", str(data), "-o", str(tmp)]) == 2
    err = capsys.readouterr().err
    assert "line 6, trainer.epoch: unknown key 'epoch'" in err and "did you mean 'epochs'?" in err


def test_a_missing_dataset_or_column_exits_2(files, capsys):
    tmp, config, data = files
    assert main(["train", "-c", str(config), "-d", str(tmp / "nope.csv"), "-o", str(tmp)]) == 2
    assert "nope.csv" in capsys.readouterr().err
    config.write_text(CONFIG.replace("{name: a,", "{name: aa,"))
    assert main(["train", "-c", str(config), "-d", str(data), "-o", str(tmp)]) == 2
    assert "aa" in capsys.readouterr().err


def test_train_needs_a_config_or_a_demo(capsys):
    assert main(["train"]) == 2
    assert "--demo" in capsys.readouterr().err


def test_file_faults_exit_2_with_one_line_naming_the_file(files, capsys):
    tmp, config, data = files
    out = tmp / "results"
    assert main(["train", "-c", str(config), "-d", str(data), "-o", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    (run_dir,) = out.iterdir()
    weights = run_dir / "model" / "model_weights.pt"
    weights.write_bytes(weights.read_bytes()[:100])
    assert main(["predict", "-m", str(run_dir), "-d", str(data)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"ludwig-nb: {weights}: not readable as weights") and "\n" not in err
    blocker = tmp / "a_file"
    blocker.write_text("")
    assert main(["train", "-c", str(config), "-d", str(data), "-o", str(blocker)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"cannot use {blocker} as the results directory: it is a file" in err


def test_evaluate_prints_a_table_and_takes_a_demo_name(files, capsys):
    tmp, _, _ = files
    out = tmp / "results"
    assert main(["train", "--demo", "cars", "-o", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    (run_dir,) = out.iterdir()
    assert main(["evaluate", "-m", str(run_dir), "-d", "demo:cars"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["feature", "metric", "demo:cars"]
    assert any(line.split()[:2] == ["Miles_per_Gallon", "r2"] for line in lines)


def test_a_deadline_from_the_command_line_saves_in_time_and_a_bad_one_is_refused(files, capsys):
    from ludwig_nb.runs.deadline_sources import clear_kernel_deadline

    tmp, config, data = files
    try:
        base = ["train", "-c", str(config), "-d", str(data), "-o", str(tmp / "r")]
        assert main([*base, "--deadline", "soon"]) == 2
        err = capsys.readouterr().err
        assert "--deadline soon: use a duration like 2h" in err and err.count("\n") == 1
        # a minute from now, inside the 5 min reserve: it saves a checkpoint at once, trains on
        assert main([*base, "--deadline", "60s", "--no-progress"]) == 0
        assert capsys.readouterr().out.startswith("completed: 56/56 steps")
        (run_dir,) = (tmp / "r").iterdir()
        events = [json.loads(line) for line in (run_dir / "events.ndjson").read_text().splitlines()]
        kinds = [e["kind"] for e in events if e["type"] == "deadline_warning"]
        assert "checkpoint" in kinds
        asked = next(
            e for e in events if e["type"] == "deadline_warning" and e["kind"] == "checkpoint"
        )
        assert any(e["type"] == "checkpoint_saved" and e["time"] >= asked["time"] for e in events)
    finally:
        clear_kernel_deadline()
