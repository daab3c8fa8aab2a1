"""``ludwig-nb`` headless: train, evaluate, predict, and its error exits."""

import io
import json

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.cli import Follower, main, progress_line
from ludwig_nb.core import events as ev
from tests.ui.conftest import T0, FakeRun, started, steps

CONFIG = """\
input_features:
  - {name: a, type: number}
  - {name: b, type: category}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 8, batch_size: 32, learning_rate: 0.01, eval_batch_size: 256}
"""


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    rng = np.random.default_rng(0)
    a = rng.normal(size=300)
    df = pd.DataFrame({"a": a, "b": rng.choice(["x", "z"], 300), "y": a > 0})
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    return tmp_path, config, data


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


def test_help_lists_the_demos_that_exist(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    assert "churn" in text and "cars" in text and "reviews" in text
    assert "housing" not in text
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--demo", "housing"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'housing'" in capsys.readouterr().err


class _Run(FakeRun):
    def __init__(self):
        super().__init__(
            config={"output_features": [{"name": "label", "type": "category"}], "trainer": {}}
        )


class _Stream(io.StringIO):
    def isatty(self):
        return False


def test_without_a_terminal_a_line_every_ten_seconds_and_no_carriage_returns():
    run, stream = _Run(), _Stream()
    now = [0.0]
    follower = Follower(run, stream, interval=10.0, clock=lambda: now[0], wall=lambda: T0)
    run.emit(started(run))
    for i in range(30):  # 30 frames, 1.5 s apart: 45 s
        run.emit(*steps(i, 1, T0 + i))
        follower.show(None, done=False)
        now[0] += 1.5
    printed = stream.getvalue()
    assert "\r" not in printed
    assert follower.lines == 5  # at 0, 10.5, 21, 31.5 and 42 s
    assert printed.splitlines()[-1].startswith("training · step 29 / 100 (29 %) · epoch 1 / 2")
    assert "at most 100 steps (early stopping); too early to forecast the stop" in printed


def test_a_paused_line_says_why_and_freezes_the_estimate():
    run = _Run()
    run.emit(started(run), *steps(0, 10, T0))
    alarm = ev.AlarmRaised(
        time=T0 + 11,
        rule="temperature>=slowdown-5",
        device=0,
        value=88.0,
        threshold=88.0,
        action="pause",
    )
    run.emit(alarm, ev.Paused(time=T0 + 11, step=10, reason="alarm:temperature>=slowdown-5"))
    line = Follower(run, _Stream()).line()
    assert line.startswith(
        "paused: GPU 0 at 88 °C, 5 °C under its slowdown point; resumes below 83 °C · step 10"
    )
    assert "estimate frozen: ETA" in line
    assert progress_line(run.state, "ETA x") != line  # the words replace the bare status


def test_compare_two_runs_prints_the_diff_and_json(files, capsys):
    tmp, config, data = files
    second = tmp / "c2.yaml"
    second.write_text(CONFIG.replace("learning_rate: 0.01", "learning_rate: 0.02"))
    for path in (config, second):
        assert (
            main(
                [
                    "train",
                    "-c",
                    str(path),
                    "-d",
                    str(data),
                    "-o",
                    str(tmp / "r"),
                    "--no-progress",
                    "--threads",
                    "1",
                ]
            )
            == 0
        )
    runs = sorted(p for p in (tmp / "r").iterdir() if p.is_dir())
    capsys.readouterr()
    assert main(["compare", *map(str, runs)]) == 0
    text = capsys.readouterr().out
    assert "config (1 change(s)):" in text and "trainer.learning_rate: 0.01 | 0.02" in text
    assert "validation.combined.loss" in text
    assert main(["compare", "--json", *map(str, runs)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"] == {"trainer.learning_rate": [0.01, 0.02]}
    assert any(row["metric"] == "throughput: steps/s" for row in out["rows"])


def test_compare_a_missing_directory_exits_2(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "a"), str(tmp_path)]) == 2
    assert "no such run directory" in capsys.readouterr().err


def test_hyperopt_prints_each_trial_and_the_best(files, tmp_path, capsys):
    _, config, data = files
    config.write_text(
        CONFIG.replace("epochs: 8", "epochs: 2")
        + "hyperopt:\n  parameters:\n"
        + "    trainer.learning_rate: {space: grid_search, values: [0.001, 0.05]}\n"
    )
    out_dir = tmp_path / "out"
    args = ["hyperopt", "-c", str(config), "-d", str(data), "-o", str(out_dir), "--name", "s"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.count(": completed ") == 2 and "trainer.learning_rate=0.05" in out
    assert "best: trial " in out and (out_dir / "s" / "hyperopt_statistics.json").exists()
    # a second call resumes: both trials are finished, none reruns
    capsys.readouterr()
    assert main(args) == 0
    again = capsys.readouterr().out
    assert again.count(": completed ") == 2
    journal = (out_dir / "s" / "trials.ndjson").read_text()
    assert journal.count('"trial_started"') == 2


def test_hyperopt_config_mistake_exits_2_with_the_line(files, capsys):
    _, config, data = files
    config.write_text(
        CONFIG + "hyperopt:\n  parameters: {trainer.lr: {space: uniform, lower: 0, upper: 1}}\n"
    )
    assert main(["hyperopt", "-c", str(config), "-d", str(data)]) == 2
    err = capsys.readouterr().err
    assert "line 8, hyperopt.parameters.trainer.lr" in err and "learning_rate" in err


def test_the_console_script_exits_quickly_with_its_output_and_files_whole(files):
    import os
    import subprocess
    import sys
    from pathlib import Path

    tmp, config, data = files
    out = tmp / "results"
    root = str(Path(__file__).resolve().parents[1])
    cmd = [
        sys.executable,
        "-m",
        "ludwig_nb.cli",
        "train",
        "-c",
        str(config),
        "-d",
        str(data),
        "-o",
        str(out),
        "--no-progress",
        "--json",
    ]
    done = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "PYTHONPATH": root},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("completed: 56/56 steps")  # flushed before os._exit
    payload = json.loads(done.stdout[done.stdout.index("\n{") :])  # whole
    assert payload["metrics"] and payload["status"] == "completed"
    assert isinstance(payload["warnings"], list) and payload["batch_size"] > 0
    (run_dir,) = out.iterdir()
    events = (run_dir / "events.ndjson").read_text().splitlines()
    assert json.loads(events[-1])["type"] == "run_finished"  # the log is whole
    assert json.loads((run_dir / "training_statistics.json").read_text())["training"]
    bad = subprocess.run(
        [*cmd[:5], str(tmp / "missing.yaml"), *cmd[6:]],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "PYTHONPATH": root},
    )
    assert bad.returncode == 2 and "config file not found" in bad.stderr


@pytest.mark.parametrize(
    ("argv", "starts"),
    [
        (["train", "-c", "c.yaml"], True),
        (["train", "--engine", "builtin"], True),
        (["train", "--engine=auto"], True),
        (["train", "--engine", "ludwig"], False),
        (["train", "--engine=ray"], False),
        (["evaluate", "-m", "x"], False),
        ([], False),
    ],
)
def test_torch_is_warmed_up_early_only_for_a_builtin_train(monkeypatch, argv, starts):
    from ludwig_nb import cli
    from ludwig_nb.engines.builtin import warmup

    started: list[bool] = []
    monkeypatch.setattr(warmup, "start", lambda: started.append(True))
    cli._start_engine_warm_up(argv)
    assert started == ([True] if starts else [])
