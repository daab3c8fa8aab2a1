"""``ludwig-nb train``, ``evaluate`` and ``predict`` end to end, and their error exits."""

import json

import pandas as pd
import yaml

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


def test_training_beside_trainer_trains_the_merged_section_or_is_refused_at_both_lines(
    files, capsys
):
    tmp, config, data = files
    config.write_text(CONFIG.replace("batch_size: 32, ", "") + "training: {batch_size: 32}\n")
    out = tmp / "results"
    code = main(["train", "-c", str(config), "-d", str(data), "-o", str(out), "--no-progress"])
    assert code == 0
    printed = capsys.readouterr()
    assert printed.out.startswith("completed: 56/56 steps")  # 8 epochs of 32s
    (said,) = [line for line in printed.err.splitlines() if "old syntax upgraded" in line]
    assert said.startswith("ludwig-nb: warning: line 7, training:")  # one line, located
    assert "merged with the 'trainer' section" in said
    config.write_text(CONFIG + "training: {epochs: 3}\n")
    assert main(["train", "-c", str(config), "-d", str(data), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "line 6, trainer.epochs:" in err and "line 7, training.epochs:" in err


def test_a_model_no_better_than_its_baseline_says_so_in_the_report_and_the_json(files, capsys):
    tmp, config, data = files
    frame = pd.read_csv(data)
    frame["a"], frame["b"] = 0.0, "x"  # inputs that say nothing: at best the majority class
    frame.to_csv(data, index=False)
    out = tmp / "results"
    args = ["train", "-c", str(config), "-d", str(data), "-o", str(out), "--no-progress"]
    assert main([*args, "--json"]) == 0
    printed = capsys.readouterr()  # the JSON alone on stdout, the report on stderr
    (warning,) = [line for line in printed.err.splitlines() if "⚠" in line]
    assert warning.startswith("test y accuracy ") and "than the baseline" in warning
    assert "always 'False': " in warning
    parsed = json.loads(printed.out)
    assert parsed["status"] == "completed" and parsed["warnings"][0] == warning
    (versus,) = parsed["baseline"]
    assert (versus["feature"], versus["metric"], versus["split"]) == ("y", "accuracy", "test")
    assert versus["verdict"] in ("no better", "barely better")
    assert parsed["metrics"]["test"]["y"]["accuracy"] == versus["value"]


def test_resume_from_a_run_directory_alone_keeps_its_config_dataset_and_name(files, capsys):
    tmp, config, data = files
    out = tmp / "results"
    args = ["-o", str(out), "--no-progress"]
    assert main(["train", "-c", str(config), "-d", str(data), "--name", "mine", *args]) == 0
    capsys.readouterr()
    (first,) = out.iterdir()
    assert main(["train", "--resume-from", str(first), *args]) == 0
    printed = capsys.readouterr().out
    (second,) = [d for d in out.iterdir() if d != first]
    assert second.name.startswith("mine-") and printed.startswith("completed: 56/56 steps")
    assert yaml.safe_load((second / "config.yaml").read_text()) == yaml.safe_load(
        (first / "config.yaml").read_text()
    )
    events = [json.loads(line) for line in (second / "events.ndjson").read_text().splitlines()]
    (read,) = [e for e in events if e["type"] == "data_progress" and e["stage"] == "read"]
    assert read["rows"] == 300


def test_resume_from_a_run_on_a_table_asks_for_the_dataset(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    from ludwig_nb.runs import train

    frame = pd.DataFrame({"a": range(100), "y": [i % 2 == 0 for i in range(100)]})
    config = (
        "input_features: [{name: a, type: number}]\n"
        "output_features: [{name: y, type: binary}]\ntrainer: {epochs: 1}\n"
    )
    run = train(config, frame, results_dir=tmp_path / "r", wait=True)
    assert main(["train", "--resume-from", str(run.directory), "-o", str(tmp_path / "r")]) == 2
    assert "the run does not name one (it trained on an in-memory table): pass the dataset" in (
        capsys.readouterr().err
    )


def test_a_data_error_and_the_binary_label_note_are_each_said_once(files, capfd, caplog):
    tmp, config, data = files
    frame = pd.read_csv(data)
    frame["y"] = frame["y"].map({True: "hi", False: "lo"})
    frame.to_csv(data, index=False)
    out = tmp / "results"
    assert main(["train", "-c", str(config), "-d", str(data), "-o", str(out), "--no-progress"]) == 0
    # said in this process's log, or on stderr by the process that read the data
    said = capfd.readouterr().err + "\n".join(r.getMessage() for r in caplog.records)
    assert said.count("binary column 'y': 'hi' taken as the true value") == 1, said
    assert "to choose, give its feature preprocessing: {fallback_true_label:" in said
    caplog.clear()
    frame["a"] = frame["a"].astype(object)
    frame.loc[5, "a"] = "abc"
    frame.to_csv(data, index=False)
    assert main(["train", "-c", str(config), "-d", str(data), "-o", str(out), "--no-progress"]) == 2
    said = capfd.readouterr().err + "\n".join(r.getMessage() for r in caplog.records)
    assert said.count("non-numeric values (row 5: 'abc')") == 1, said


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
