"""The Ray Tune executor's notebook side, over a fake search backend (the seam Ray sits behind).

The fake plays Tune's part through the real hooks: it starts trials, prunes and cuts them and
reaps them; each trial is an ordinary run of the real run layer, on a trial engine that plays
the trial's events. The real Tune experiment is tests/engines/ray/tune/test_driver.py (marker
``ray``).
"""

import json
import threading

import pytest

from ludwig_nb.config import ConfigError
from ludwig_nb.core import events as ev
from ludwig_nb.core.control import StopRequested
from ludwig_nb.engines.base import Engine
from ludwig_nb.search import JOURNAL_FILE, STATISTICS_FILE, hyperopt
from ludwig_nb.search import tune as tune_executor
from tests.runs.conftest import ab_config, ab_frame, until

SECTION = """\
hyperopt:
  parameters:
    trainer.learning_rate: {space: choice, categories: [0.1, 0.01, 0.001]}
  search_alg: {type: random, random_state_seed: 7}
  executor: {type: ray, num_samples: NUM, cpu_resources_per_trial: 2}
"""


def _config(num_samples=2):
    return ab_config("{epochs: 3, batch_size: 16}") + SECTION.replace("NUM", str(num_samples))


class TrialEngine(Engine):
    """A Tune trial as its mirror run sees it: one evaluation per value, then the end.

    ``hold``: an event the trial waits on after its first evaluation (the scheduler's turn).
    ``end``: the run's final status ("completed", or "stopped" as a cut trial ends).
    """

    name = "ray"

    def __init__(self, values, hold=None, end="completed", refuse=None):
        self.values, self.hold, self.end, self.refuse = values, hold, end, refuse

    def check(self, config):
        if self.refuse:
            raise ConfigError(self.refuse, path="trainer.learning_rate")

    def prepare_data(self, config, dataset):
        return dataset

    def plan(self, config, rows):
        return ev.ScheduleInfo(total_steps=3, steps_per_epoch=1, epochs=3, batch_size=16)

    def warm_up(self):
        pass

    def fit(self, job, emit, control):
        schedule = self.plan(job.config, 0)
        emit(
            ev.RunStarted(
                time=1.0,
                run_id=job.run_id,
                name=job.name,
                engine="ray",
                device="cpu",
                schedule=schedule,
            )
        )
        try:
            for k, value in enumerate(self.values):
                control.checkpoint()
                metrics = {"validation": {"combined": {"loss": value}}}
                emit(
                    ev.EvaluationFinished(
                        time=2.0 + k, step=k, epoch=k, start_time=1.5 + k, metrics=metrics
                    )
                )
                if k == 0 and self.hold is not None:
                    assert self.hold.wait(60), "the test never let the trial go on"
            control.checkpoint()
        except StopRequested as stop:
            emit(ev.RunFinished(time=9.0, status="stopped", step=0, reason=str(stop)))
            return
        emit(ev.RunFinished(time=9.0, status=self.end, step=len(self.values)))
        return


class FakeTune:
    """A ``SearchBackend``: ``script(spec, hooks, backend)`` plays Tune's loop."""

    def __init__(self, script, engines):
        self.script, self.engines = script, engines
        self.spec = None
        self.assignments = {}

    def missing(self, search_alg):
        return None

    def check(self, config):
        pass

    def trial_engine(self, channel, tune_id, storage):
        return self.engines[tune_id]

    def decode(self, parameters, values):
        return dict(values)

    def trial_folder(self, storage, run_dir, run_id):
        return run_dir if storage is None else storage / run_id

    def run(self, spec, hooks):
        self.spec = spec
        self.script(spec, hooks, self)

    def start(self, hooks, tune_id, params):
        self.assignments[tune_id] = hooks.start_trial(tune_id, params, "channel-1")
        return self.assignments[tune_id]


def _reap(hooks):
    """Tune's loop turning until every trial it started has been reaped."""
    until(lambda: (hooks.tick(), not hooks.live)[1])


@pytest.fixture
def fake_tune(monkeypatch):
    def install(script, engines):
        backend = FakeTune(script, engines)
        monkeypatch.setattr(tune_executor, "search_backend", lambda section: backend)
        return backend

    return install


def _hyperopt(tmp_path, num_samples=2, name="tune"):
    return hyperopt(
        _config(num_samples),
        ab_frame(60),
        name=name,
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        wait=True,
    )


def test_each_tune_trial_is_a_trial_of_the_search_with_its_own_run_journal_and_statistics(
    tmp_path, fake_tune
):
    def script(spec, hooks, backend):
        hooks.set_slots(2)
        backend.start(hooks, "t0", {"trainer.learning_rate": 0.1})
        backend.start(hooks, "t1", {"trainer.learning_rate": 0.01})
        _reap(hooks)

    engines = {"t0": TrialEngine([0.5, 0.4]), "t1": TrialEngine([0.3, 0.2])}
    backend = fake_tune(script, engines)
    search = _hyperopt(tmp_path)
    assert search.error is None, search.error
    spec = backend.spec
    assert spec.num_samples == 2 and spec.points == [] and spec.evaluated == []
    assert spec.cpus == 2.0 and spec.gpus == 0.0 and spec.max_concurrent is None
    assert spec.max_t == 3 and spec.seed == 7 and spec.goal == "minimize"
    assert spec.metric_path == ("validation", "combined", "loss")
    trials = search.trials
    assert list(trials["state"]) == ["completed", "completed"]
    assert list(trials["metric"]) == [0.4, 0.2]
    assert list(trials["trainer.learning_rate"]) == [0.1, 0.01]
    assert search.slots == 2  # what Tune found room for
    assert search.best["trial"] == 1
    records = search.records()
    assert [r.curve for r in records] == [[(1, 0.5), (2, 0.4)], [(1, 0.3), (2, 0.2)]]
    # each trial's run trains its own config: the trial's parameters applied
    assert [r.run.config["trainer"]["learning_rate"] for r in records] == [0.1, 0.01]
    assignment = backend.assignments["t0"]
    assert assignment["run_dir"] == records[0].run_dir == assignment["folder"]
    assert assignment["threads"] == 2 and assignment["device"] == "cpu"
    assert assignment["config"]["trainer"]["learning_rate"] == 0.1
    assert assignment["control"] == (None, None)
    lines = (search.directory / JOURNAL_FILE).read_text().splitlines()
    ends = [json.loads(x) for x in lines if '"trial_finished"' in x]
    assert [(e["trial"], e["state"], e["metric"]) for e in ends] == [
        (0, "completed", 0.4),
        (1, "completed", 0.2),
    ]
    stats = json.loads((search.directory / STATISTICS_FILE).read_text())
    assert [r["metric_score"] for r in stats["hyperopt_results"]] == [0.2, 0.4]


def test_a_scheduler_prune_ends_a_trial_pruned_and_a_cut_at_max_t_ends_it_completed(
    tmp_path, fake_tune
):
    hold = threading.Event()

    def script(spec, hooks, backend):
        backend.start(hooks, "t0", {"trainer.learning_rate": 0.1})
        record = hooks.live["t0"]
        until(lambda: len(record.curve) == 1)  # its first evaluation reached the search
        hooks.trial_pruned("t0")
        hold.set()
        backend.start(hooks, "t1", {"trainer.learning_rate": 0.01})
        hooks.trial_cut("t1")
        _reap(hooks)

    engines = {
        "t0": TrialEngine([0.9, 0.8], hold=hold),
        "t1": TrialEngine([0.3], end="stopped"),  # stopped at the scheduler's max_t
    }
    fake_tune(script, engines)
    search = _hyperopt(tmp_path)
    assert search.error is None, search.error
    assert list(search.trials["state"]) == ["pruned", "completed"]
    pruned = search.records()[0]
    assert pruned.curve == [(1, 0.9)]  # stopped before its second evaluation
    assert pruned.run.state.reason == "pruned"  # the search stopped its run as pruned


def test_a_trial_config_its_engine_refuses_fails_and_tune_hears_why(tmp_path, fake_tune):
    def script(spec, hooks, backend):
        backend.start(hooks, "t0", {"trainer.learning_rate": 0.1})
        backend.start(hooks, "t1", {"trainer.learning_rate": 0.01})
        _reap(hooks)

    engines = {"t0": TrialEngine([0.5], refuse="too fast"), "t1": TrialEngine([0.3])}
    backend = fake_tune(script, engines)
    search = _hyperopt(tmp_path)
    assert list(search.trials["state"]) == ["failed", "completed"]
    assert "too fast" in backend.assignments["t0"]["refused"]
    assert "too fast" in search.records()[0].error


def test_a_resumed_search_reruns_its_unfinished_trial_first_and_tells_tune_the_finished(
    tmp_path, fake_tune
):
    hold = threading.Event()

    def first(spec, hooks, backend):
        backend.start(hooks, "t0", {"trainer.learning_rate": 0.1})
        _reap(hooks)
        backend.start(hooks, "t1", {"trainer.learning_rate": 0.01})
        until(lambda: len(hooks.live["t1"].curve) == 1)
        hooks.search.stop()  # the whole search stops in trial 1: it reruns on resume
        hold.set()
        _reap(hooks)

    fake_tune(first, {"t0": TrialEngine([0.5]), "t1": TrialEngine([0.3, 0.2], hold=hold)})
    stopped = _hyperopt(tmp_path, num_samples=3)
    assert list(stopped.trials["state"]) == ["completed", "stopped"]

    def second(spec, hooks, backend):
        _reap(hooks)

    backend = fake_tune(second, {})
    resumed = _hyperopt(tmp_path, num_samples=3)
    spec = backend.spec
    assert spec.points == [{"trainer.learning_rate": 0.01}]  # the unfinished trial, first
    assert spec.evaluated == [({"trainer.learning_rate": 0.1}, 0.5, "completed")]
    assert spec.num_samples == 2  # three, less the one that finished
    # the unfinished trial left the table (its rerun will take a new number)
    assert list(resumed.trials["trial"]) == [0]


def test_the_executor_refuses_what_its_trials_cannot_train_before_anything_is_written(
    tmp_path, fake_tune
):
    backend = fake_tune(lambda spec, hooks, b: None, {})
    backend.missing = lambda search_alg: 'executor type ray needs Ray Tune: pip install "x"'
    from ludwig_nb.engines.base import EngineUnavailable

    with pytest.raises(EngineUnavailable, match="needs Ray Tune"):
        _hyperopt(tmp_path)
    assert not (tmp_path / "results").exists()


def test_the_search_backend_comes_from_the_engine_the_executor_names():
    from ludwig_nb.engines.ray.tune.backend import TuneBackend

    backend = tune_executor.search_backend({"executor": {"type": "ray"}})
    assert isinstance(backend, TuneBackend)


def test_an_engine_without_a_search_backend_cannot_be_an_executor():
    from ludwig_nb.engines.base import EngineUnavailable

    with pytest.raises(EngineUnavailable, match="engine builtin cannot run a search's trials"):
        tune_executor.search_backend({"executor": {"type": "builtin"}})
