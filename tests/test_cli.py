"""``ludwig-nb`` headless: train, evaluate, predict, and its error exits."""

import json

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.cli import main

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
    (run_dir,) = out.iterdir()
    assert (run_dir / "model").is_dir() and (run_dir / "events.ndjson").is_file()

    assert main(["evaluate", "-m", str(run_dir), "-d", str(data)]) == 0
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
