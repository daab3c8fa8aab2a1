"""A run directory holds Ludwig's result files; real ``ludwig visualize`` reads them."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.runs import train

CONFIG = """\
input_features:
  - {name: a, type: number}
  - {name: b, type: category}
output_features:
  - {name: y, type: category}
trainer: {epochs: 3, batch_size: 32}
gpu_watch: {enabled: false}
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ludwig_files")
    rng = np.random.default_rng(1)
    a = rng.normal(size=300)
    df = pd.DataFrame(
        {
            "a": a,
            "b": rng.choice(["p", "q"], 300),
            "y": np.where(a > 0.3, "hi", np.where(a < -0.3, "lo", "mid")),
        }
    )
    run = train(
        CONFIG,
        df,
        results_dir=tmp / "r",
        registry_dir=tmp / "reg",
        threads=1,
        wait=True,
        random_seed=7,
    )
    assert run.status == "completed", run.error
    return run.directory


def _load(run_dir: Path, name: str) -> dict:
    return json.loads((run_dir / name).read_text())


def test_training_statistics_in_ludwigs_shape(run_dir):
    stats = _load(run_dir, "training_statistics.json")
    assert set(stats) == {"training", "validation", "test", "evaluation_frequency"}
    assert stats["evaluation_frequency"] == {"frequency": 1.0, "period": "epoch"}
    assert len(stats["validation"]["y"]["accuracy"]) == 3  # one per epoch
    assert "combined" in stats["validation"] and "loss" in stats["training"]["y"]


def test_test_statistics_and_description(run_dir):
    test = _load(run_dir, "test_statistics.json")
    assert {"y", "combined"} <= set(test) and 0.0 <= test["y"]["accuracy"] <= 1.0
    stats = _load(run_dir, "training_statistics.json")
    assert test["y"]["accuracy"] in stats["test"]["y"]["accuracy"]  # one of the evaluations
    desc = _load(run_dir, "description.json")
    assert desc["random_seed"] == 7 and desc["data_format"] == "dataframe"
    assert desc["config"]["output_features"][0]["name"] == "y"
    assert desc["compute"]["num_nodes"] == 1 and desc["torch_version"]


def _ludwig_python() -> str | None:
    """This interpreter inside the Ludwig venv (scripts/ci/test_ludwig.sh), else that venv's."""
    explicit = os.environ.get("LUDWIG_NB_LUDWIG_PYTHON")
    if explicit:
        return explicit
    if importlib.util.find_spec("ludwig") is not None:
        return sys.executable
    # the venv scripts/setup/ludwig_env.sh builds for this checkout's requirements, if built
    script = Path(__file__).resolve().parents[2] / "scripts" / "setup" / "ludwig_env.sh"
    where = subprocess.run(
        ["bash", str(script), "--path"], capture_output=True, text=True, check=True
    ).stdout.strip()
    venv = Path(where)
    return str(venv / "bin" / "python") if (venv / ".complete").is_file() else None


_VISUALIZE = """
import sys
from ludwig.visualize import compare_performance_cli, learning_curves_cli
run_dir, out = sys.argv[1], sys.argv[2]
learning_curves_cli([run_dir + "/training_statistics.json"], output_directory=out + "/lc",
                    file_format="png")
compare_performance_cli([run_dir + "/test_statistics.json"], output_directory=out + "/cp",
                        file_format="png")
"""


@pytest.mark.ludwig
@pytest.mark.slow
def test_real_ludwig_visualize_reads_our_run(run_dir, tmp_path):
    python = _ludwig_python()
    if python is None:
        pytest.skip("no Ludwig venv: run scripts/setup/ludwig_env.sh")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [python, "-c", _VISUALIZE, str(run_dir), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    curves = {p.name for p in (tmp_path / "lc").glob("*.png")}
    # Ludwig plots accuracy only where the training split has it (evaluate_training_set)
    assert {"learning_curves_y_loss.png", "learning_curves_combined_loss.png"} <= curves
    assert list((tmp_path / "cp").glob("compare_performance*.png"))
