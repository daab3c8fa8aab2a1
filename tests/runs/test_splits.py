"""``Run.splits``: the rows the run trained, validated and tested on, as its engine cut them."""

import math

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.engines.base import TrainJob
from ludwig_nb.runs import train
from ludwig_nb.runs.run import Run
from ludwig_nb.runs.splits import SplitsUnavailable
from tests.runs.conftest import ScriptedEngine

CONFIG = """\
input_features:
  - {name: a, type: number}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 2, batch_size: 32, eval_batch_size: 256}
"""


def _frame(rows=300):
    rng = np.random.default_rng(3)
    a = rng.normal(size=rows)
    return pd.DataFrame({"row": np.arange(rows), "a": a, "y": a > 0.3})


def test_the_splits_are_disjoint_and_the_ones_the_engine_trained_and_tested_on(tmp_path):
    df = _frame()
    run = train(CONFIG, df, results_dir=tmp_path / "r", registry_dir=tmp_path / "g", wait=True)
    assert run.status == "completed"
    splits = run.splits
    rows = {name: set(frame["row"]) for name, frame in splits.items()}
    assert set(rows) == {"training", "validation", "test"}
    assert not rows["training"] & (rows["validation"] | rows["test"])
    assert not rows["validation"] & rows["test"]
    assert rows["training"] | rows["validation"] | rows["test"] == set(df["row"])
    assert all(list(frame.index) == list(frame["row"]) for frame in splits.values())  # kept
    # the engine's own split: its steps per epoch count the training rows given here
    [started] = [e for e in run.events if isinstance(e, ev.RunStarted)]
    assert started.schedule.steps_per_epoch == math.ceil(len(splits["training"]) / 32)
    # and its test metric is the one the model scores on these test rows
    best = run.state.best_metrics["test"]["y"]["accuracy"]
    scored = run.model.evaluate(splits["test"])["y"]["accuracy"]
    assert scored == pytest.approx(best, abs=1e-6)


def test_given_splits_are_returned_as_given(tmp_path):
    df = _frame()
    given = {"training": df.iloc[:200], "validation": df.iloc[200:250], "test": df.iloc[250:]}
    run = train(CONFIG, given, results_dir=tmp_path / "r", registry_dir=tmp_path / "g", wait=True)
    assert list(run.splits["test"]["row"]) == list(range(250, 300))
    assert len(run.splits["training"]) == 200


def test_an_engine_that_cuts_its_own_splits_says_so(tmp_path):
    class OwnSplits(ScriptedEngine):
        shares_splits = False

    job = TrainJob(config={}, dataset=_frame(), run_dir=tmp_path, run_id="r-1", name="r")
    run = Run(run_id="r-1", name="r", directory=tmp_path, engine=OwnSplits(), job=job)
    with pytest.raises(SplitsUnavailable, match="cuts its own splits"):
        run.splits
