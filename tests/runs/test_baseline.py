"""A real run carries its trivial baseline: computed on the training split the engine uses."""

import numpy as np
import pandas as pd

from ludwig_nb.core import events as ev
from ludwig_nb.data import split_dataset
from ludwig_nb.engines.base import TrainJob, job_seed
from ludwig_nb.runs import train
from ludwig_nb.runs.baseline import baseline_event

CONFIG = """\
input_features:
  - {name: a, type: number}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 2, batch_size: 32, eval_batch_size: 256}
"""


def _frame():
    rng = np.random.default_rng(1)
    a = rng.normal(size=300)
    return pd.DataFrame({"a": a, "y": np.where(a > 0.8, "yes", "no")})


def test_a_run_emits_its_baseline_into_state_and_status(tmp_path):
    df = _frame()
    run = train(CONFIG, df, results_dir=tmp_path / "r", registry_dir=tmp_path / "g", wait=True)
    found = [e for e in run.events if isinstance(e, ev.BaselineComputed)]
    assert len(found) == 1
    state = run.state
    assert state.baseline_predictors == {"y": "always 'no'"}
    training = split_dataset(df, {}, 42)["training"]  # the engine's split: seed 42
    expected = float((training["y"] == "no").mean())
    assert state.baseline["training"]["y"]["accuracy"] == expected
    assert set(state.baseline) == {"training", "validation", "test"}
    import json

    status = json.loads((run.directory / "status.json").read_text())
    assert status["baseline"]["test"]["y"]["accuracy"] == state.baseline["test"]["y"]["accuracy"]


def test_the_seed_follows_the_job_then_the_config(tmp_path):
    job = TrainJob(config={"random_seed": 7}, dataset=None, run_dir=tmp_path, run_id="r", name="r")
    assert job_seed(job) == 7
    job.seed = 3
    assert job_seed(job) == 3
    assert job_seed(TrainJob(config={}, dataset=None, run_dir=tmp_path, run_id="r", name="r")) == 42


def test_no_baseline_for_unreadable_data_or_outputs_without_one(tmp_path):
    bad = TrainJob(
        config={"output_features": [{"name": "y", "type": "binary"}]},
        dataset=pd.DataFrame({"z": [1, 2, 3]}),
        run_dir=tmp_path,
        run_id="r",
        name="r",
    )
    assert baseline_event(bad, lambda: 0.0) is None
    vector = TrainJob(
        config={"output_features": [{"name": "t", "type": "vector"}]},
        dataset=pd.DataFrame({"t": ["1 2", "3 4", "5 6"] * 10}),
        run_dir=tmp_path,
        run_id="r",
        name="r",
    )
    assert baseline_event(vector, lambda: 0.0) is None  # (text outputs have one: an LLM's)


class _Prepared:
    """A dataset read by another process (``engines.base.PreparedDataset``)."""

    def __init__(self, source, seed, baseline):
        self.source, self.seed, self.rows, self.columns = source, seed, 300, 2
        self.fingerprint = ""
        self._baseline = baseline
        self.asked = 0

    def baseline(self):
        self.asked += 1
        return self._baseline


def test_a_dataset_read_elsewhere_gives_its_baseline_unless_split_with_another_seed(tmp_path):
    from ludwig_nb.config import load_config
    from ludwig_nb.runs.baseline import preprocessing_detail

    path = tmp_path / "data.csv"
    _frame().to_csv(path, index=False)
    config = load_config(CONFIG).to_dict()
    here = baseline_event(TrainJob(config, str(path), tmp_path, "r", "r"), lambda: 0.0)
    assert here is not None
    given = ({"test": {"y": {"accuracy": 0.5}}}, {"y": "always 'no'"})
    same_seed = _Prepared(str(path), 42, given)
    job = TrainJob(config, same_seed, tmp_path, "r", "r")
    event = baseline_event(job, lambda: 0.0)
    assert same_seed.asked == 1 and (event.metrics, event.predictors) == given
    assert preprocessing_detail(job).startswith("300 rows")
    other_seed = _Prepared(str(path), 42, given)  # the job splits with 3: read the file here
    event = baseline_event(TrainJob(config, other_seed, tmp_path, "r", "r", seed=3), lambda: 0.0)
    assert other_seed.asked == 0 and event.predictors == here.predictors
    assert event.metrics != here.metrics  # another split, another score
    nothing = _Prepared(str(path), 42, None)  # no baseline (e.g. a text output)
    assert baseline_event(TrainJob(config, nothing, tmp_path, "r", "r"), lambda: 0.0) is None
