"""compare() on two real runs with a config change, a Ludwig output directory, and errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.runs import train
from ludwig_nb.runs.compare import Comparison, compare, flatten_config, metric_goal
from ludwig_nb.runs.compare_sources import RunRecord

BASE = """\
input_features:
  - {name: a, type: number}
  - {name: b, type: category}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 15, batch_size: 32, learning_rate: 0.001, early_stop: -1}
gpu_watch: {simulate: true, interval: 0.25}
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    rng = np.random.default_rng(2)
    a = rng.normal(size=3000)  # long enough for the 4 Hz sampler's ticks in every phase
    df = pd.DataFrame({"a": a, "b": rng.choice(["p", "q"], 3000), "y": a > 0})
    common = {"results_dir": tmp / "r", "registry_dir": tmp / "reg", "threads": 1, "wait": True}
    base = train(BASE, df, name="base", **common)
    faster = train(
        BASE.replace("learning_rate: 0.001", "learning_rate: 0.05").replace(
            "batch_size: 32", "batch_size: 64"
        ),
        df,
        name="fast",
        **common,
    )
    assert base.status == faster.status == "completed"
    return base, faster


def test_config_diff_shows_only_what_changed(runs):
    comparison = compare(*runs)
    assert comparison.names == ["base", "fast"]
    assert comparison.config_diff == {
        "trainer.batch_size": (32, 64),
        "trainer.learning_rate": (0.001, 0.05),
    }
    assert len(comparison.config_all) > 20  # the rendered config: every default too
    assert comparison.config_all["input_features[a].type"] == ("number", "number")


def test_metric_rows_have_values_deltas_and_the_better_run(runs):
    base, fast = runs
    frame = compare(base, fast.directory).to_frame()  # a handle and a directory
    loss = frame.loc["validation.combined.loss"]
    expected = [
        json.loads((r.directory / "status.json").read_text())["best_metrics"]["validation"][
            "combined"
        ]["loss"]
        for r in runs
    ]
    assert (loss["base"], loss["fast"]) == pytest.approx(expected)
    assert loss["delta"] == pytest.approx(expected[1] - expected[0])
    assert loss["better"] == ("base" if expected[0] < expected[1] else "fast")
    auc = frame.loc["validation.y.roc_auc"]
    assert auc["goal"] == "max"
    steps = frame.loc["throughput: steps/s"]
    assert steps["kind"] == "resource" and steps["base"] > 0 and steps["fast"] > 0
    assert "resources: energy (J)" in frame.index  # the simulated GPU's power integral
    assert math.isfinite(frame.loc["time: training (s)", "delta_pct"])
    # the simulated GPU's exact counters: a short run on a cool card is never throttled
    throttled = frame.loc["resources: throttled (% of the run)"]
    assert (throttled["base"], throttled["fast"]) == (0.0, 0.0)
    assert frame.loc["resources: throttled, thermal (%)", "base"] == 0.0


def test_curves_overlay_on_step_epoch_and_elapsed(runs):
    comparison = compare(*runs)
    by_step = comparison.curves("validation", "combined", "loss", x="step")
    assert set(by_step) == {"base", "fast"}
    assert len(by_step["base"][0]) == 15  # one point per epoch's evaluation
    assert by_step["fast"][0][-1] < by_step["base"][0][-1]  # twice the batch: half the steps
    by_epoch = comparison.curves("validation", "combined", "loss", x="epoch")
    assert by_epoch["base"][0] == by_epoch["fast"][0] == [float(e) for e in range(1, 16)]
    with pytest.raises(ValueError, match="x must be"):
        comparison.curves("validation", "combined", "loss", x="wall")


def test_the_html_is_static_and_marks_the_better_value(runs):
    from ludwig_nb.ui.compare_view import comparison_html

    text = comparison_html(compare(*runs))
    assert "trainer.learning_rate" in text and "<details>" in text and "<svg" in text
    assert "<b>" in text and "<script" not in text  # survives saving: no JavaScript


def test_a_ludwig_output_directory_compares_with_a_run(runs, tmp_path):
    ludwig_dir = tmp_path / "experiment_run"
    ludwig_dir.mkdir()
    (ludwig_dir / "description.json").write_text(
        json.dumps(
            {
                "config": {
                    "input_features": [{"name": "a", "type": "number"}],
                    "output_features": [{"name": "y", "type": "binary"}],
                    "trainer": {"batch_size": 128},
                },
                "dataset": "other.csv",
            }
        )
    )
    (ludwig_dir / "training_statistics.json").write_text(
        json.dumps(
            {
                "training": {"y": {"loss": [0.6, 0.5]}, "combined": {"loss": [0.6, 0.5]}},
                "validation": {
                    "y": {"loss": [0.7, 0.55], "roc_auc": [0.8, 0.85]},
                    "combined": {"loss": [0.7, 0.55]},
                },
                "test": {},
                "evaluation_frequency": {"frequency": 1, "period": "epoch"},
            }
        )
    )
    comparison = compare(runs[0], ludwig_dir)
    assert comparison.records[1].kind == "ludwig"
    assert comparison.to_frame().loc["validation.y.roc_auc", "experiment_run"] == 0.85
    assert comparison.config_diff["trainer.batch_size"] == (32, 128)
    assert comparison.curves("validation", "y", "roc_auc", x="epoch")["experiment_run"] == (
        [1.0, 2.0],
        [0.8, 0.85],
    )
    assert "input_features[b].type" in comparison.config_diff  # b only in the base


def test_warnings_name_what_makes_runs_incomparable(runs, tmp_path):
    comparison = compare(*runs)
    assert comparison.warnings == []  # same data, split, hardware (the CPU)
    other = tmp_path / "ludwig"
    other.mkdir()
    (other / "description.json").write_text(
        json.dumps(
            {
                "config": {
                    "output_features": [{"name": "z", "type": "number"}],
                    "preprocessing": {
                        "split": {"type": "random", "probabilities": [0.8, 0.1, 0.1]}
                    },
                },
                "dataset": "x.csv",
                "compute": {"devices": {"0": {"gpu_type": "NVIDIA H200"}}},
            }
        )
    )
    warnings = compare(runs[0], other).warnings
    assert any(w.startswith("different splits") for w in warnings)
    assert any(w.startswith("different hardware") for w in warnings)
    assert any("output features" in w for w in warnings)


def test_bad_sources_say_what_was_expected(tmp_path):
    with pytest.raises(ValueError, match="at least two"):
        compare(tmp_path)
    with pytest.raises(FileNotFoundError, match="neither a ludwig_nb run directory"):
        compare(tmp_path, tmp_path)
    with pytest.raises(FileNotFoundError, match="no such run directory"):
        compare(tmp_path / "nope", tmp_path)


def test_helpers():
    assert metric_goal("accuracy") == "max" and metric_goal("mean_squared_error") == "min"
    flat = flatten_config({"a": [{"name": "x", "t": 1}], "b": [1, 2]})
    assert flat == {"a[x].name": "x", "a[x].t": 1, "b": [1, 2]}


def test_hardware_is_what_the_run_trained_on_whether_the_sampler_ticked_or_not():
    def record(device, gpus):
        facts = {"device": device, "gpus": gpus}
        return RunRecord("run", None, "ludwig_nb", {}, {}, {}, {}, facts)

    ticked, quick = record("cpu", ["Simulated GPU"]), record("cpu", [])
    assert ticked.hardware == quick.hardware == "cpu"
    gpu, gpu_quick = record("cuda:0", ["NVIDIA H200"]), record("cuda:1", [])
    assert gpu.hardware == "NVIDIA H200" and gpu_quick.hardware == "cuda:1"
    ludwig = record(None, ["NVIDIA H200"])
    assert ludwig.hardware == "NVIDIA H200" and record(None, []).hardware == ""
    hardware_warnings = lambda *r: [w for w in Comparison(r).warnings if "hardware" in w]  # noqa: E731
    assert hardware_warnings(ticked, quick) == []
    assert hardware_warnings(gpu, gpu_quick) == []
    assert hardware_warnings(gpu, ludwig) == []
    assert hardware_warnings(quick, ludwig) == ["different hardware: run=cpu, run (2)=NVIDIA H200"]
