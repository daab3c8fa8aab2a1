"""``ludwig-nb evaluate`` and ``predict``: Ludwig's prediction columns, and a closed pipe."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd

from ludwig_nb.cli import main

THREE_CLASSES = """\
input_features:
  - {name: a, type: number}
output_features:
  - {name: c, type: category}
trainer: {epochs: 2, batch_size: 64}
"""


def _trained(tmp_path, rows: int = 300):
    rng = np.random.default_rng(0)
    a = rng.normal(size=rows)
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": a, "c": np.where(a > 0.5, "p", np.where(a < -0.5, "q", "r"))}).to_csv(
        data, index=False
    )
    config = tmp_path / "c.yaml"
    config.write_text(THREE_CLASSES)
    out = tmp_path / "results"
    assert main(["train", "-c", str(config), "-d", str(data), "-o", str(out), "--no-progress"]) == 0
    (run_dir,) = out.iterdir()
    return run_dir, data


def test_predictions_csv_has_one_column_per_class_and_no_numpy_text(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    run_dir, data = _trained(tmp_path)
    capsys.readouterr()
    assert main(["predict", "-m", str(run_dir), "-d", str(data)]) == 0
    text = capsys.readouterr().out
    header = text.splitlines()[0].split(",")
    assert header[:2] == ["c_predictions", "c_probability"]
    assert sorted(header[2:]) == ["c_probabilities_p", "c_probabilities_q", "c_probabilities_r"]
    assert "[" not in text and "]" not in text
    rows = [line.split(",") for line in text.splitlines()[1:]]
    assert len(rows) == 300
    for row in rows[:20]:  # each row's classes sum to one, its probability is the top one
        per_class = [float(x) for x in row[2:]]
        assert abs(sum(per_class) - 1) < 1e-5 and float(row[1]) == max(per_class)


def test_predict_into_a_closed_pipe_ends_quietly(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    run_dir, _ = _trained(tmp_path)
    big = tmp_path / "big.csv"
    rng = np.random.default_rng(1)
    pd.DataFrame({"a": rng.normal(size=20_000)}).to_csv(big, index=False)  # > a pipe's buffer
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    piped = subprocess.run(
        f"'{sys.executable}' -m ludwig_nb.cli predict -m '{run_dir}' -d '{big}' | head -n 2",
        shell=True,
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert piped.stdout.splitlines()[0].startswith("c_predictions,")
    assert len(piped.stdout.splitlines()) == 2
    assert "Traceback" not in piped.stderr and "BrokenPipeError" not in piped.stderr, piped.stderr
