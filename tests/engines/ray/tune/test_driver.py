"""``executor: {type: ray}``: a search's trials as Ray Tune trials on a local Ray (marker
``ray``; scripts/ci/test_ray.sh runs it in the Ray venv). Each trial is the built-in loop in its
Tune actor; ASHA prunes on the metric reported at each evaluation and cuts trials at its
``max_t``; the trials write their run folders to a storage path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.engines.ray.tune.driver import slots
from ludwig_nb.engines.search_backend import TuneSpec
from tests.engines.ray.conftest import table, wait_for

CONFIG = """\
input_features:
  - {name: x, type: number}
  - {name: colour, type: category}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 3, batch_size: 16, learning_rate: 0.01, early_stop: -1}
hyperopt:
  goal: minimize
  metric: loss
  parameters:
    trainer.learning_rate: {space: loguniform, lower: 0.0000001, upper: 0.1}
  search_alg:
    type: random
    random_state_seed: 0
    points_to_evaluate:
      - {trainer.learning_rate: 0.05}
      - {trainer.learning_rate: 0.05}
      - {trainer.learning_rate: 0.0000001}
  executor:
    type: ray
    num_samples: 3
    max_concurrent_trials: 2
    cpu_resources_per_trial: 1
    storage_path: STORAGE
    scheduler: {type: asha, grace_period: 1, reduction_factor: 2, max_t: 2}
"""


def _spec(**kw) -> TuneSpec:
    base = {
        "name": "s",
        "directory": Path("."),
        "parameters": {},
        "search_alg": {},
        "scheduler": {},
        "goal": "minimize",
        "num_samples": 8,
        "points": [],
        "metric_path": ("validation", "combined", "loss"),
        "evaluated": [],
        "grid": None,
        "max_concurrent": None,
        "cpus": 1.0,
        "gpus": 0.0,
        "dataset": None,
        "max_t": 3,
    }
    return TuneSpec(**{**base, **kw})


def test_as_many_trials_run_at_once_as_fit_on_the_cpus_and_gpus_up_to_the_limit():
    assert slots(_spec(), {"CPU": 2.0}) == 2  # the channel actor and the driver take none
    assert slots(_spec(cpus=0.5), {"CPU": 2.0}) == 4
    assert slots(_spec(max_concurrent=3), {"CPU": 8.0}) == 3
    assert slots(_spec(gpus=0.5), {"CPU": 8.0, "GPU": 1.0}) == 2
    assert slots(_spec(cpus=4.0), {"CPU": 2.0}) == 1  # never none: Tune waits for room


def _interval(run) -> tuple[float, float]:
    """The trial's training, by its own events: from its start (data and model ready) to its
    end, both stamped in its Tune actor."""
    started = [e.time for e in run.events if isinstance(e, ev.RunStarted)]
    ended = [e.time for e in run.events if isinstance(e, ev.RunFinished)]
    assert started and ended, f"{run.name}: no start or end among its events"
    return started[0], ended[-1]


def _held(record) -> bool:
    run = record.run
    return run is not None and any(isinstance(e, ev.Paused) for e in run.events)


@pytest.mark.ray
@pytest.mark.timeout(600)
def test_two_trials_train_at_once_asha_prunes_one_and_cuts_two_at_max_t_on_the_storage(
    ray_session, tmp_path
):
    from ludwig_nb.search import JOURNAL_FILE, STATISTICS_FILE, hyperopt

    storage = tmp_path / "shared"
    config = CONFIG.replace("STORAGE", str(storage))
    search = hyperopt(
        config,
        table(400),
        name="tune",
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
    )
    # A trial that starts while the search is paused holds before its first step: Tune must
    # have both trials in their training loops at once (each in its own actor, one CPU each
    # of the Ray's two) before anything trains. One at a time, the second would never come.
    search.pause()
    held = wait_for(lambda: len([r for r in search.records() if _held(r)]) >= 2 or None, 300)
    assert held, "Tune never had two trials in their training loops at once"
    for record in search.records()[:2]:
        pause = next(e for e in record.run.events if isinstance(e, ev.Paused))
        assert pause.step == 0  # held before its first step, not paused mid-way
    search.resume()
    search.wait(300)
    assert search.is_done, "the Tune search did not end within 300 s of its resume"
    assert search.error is None, search.error
    trials = search.trials
    assert list(trials["state"]) == ["completed", "completed", "pruned"], trials
    # the first two train the same (same seed): ASHA's cutoff at a rung (strict) never stops
    # either, whichever reports first; the third is far worse at its first evaluation
    assert list(trials["trainer.learning_rate"]) == pytest.approx([0.05, 0.05, 1e-7])
    records = search.records()
    # max_t 2 of 3 epochs: the first two stop after their second evaluation (completed, as
    # Tune's trials at max_t); the third right after its first (pruned)
    assert [r.epoch for r in records] == [2, 2, 1]
    assert [len(r.curve) for r in records] == [2, 2, 1]
    reasons = [r.run.state.reason for r in records]
    assert reasons == ["stopped: max_t", "stopped: max_t", "stopped: pruned"]
    assert search.slots == 2
    # the two trained at the same time: their training intervals overlap
    (start0, end0), (start1, end1) = _interval(records[0].run), _interval(records[1].run)
    print(f"trial 0 trained {start0:.3f} .. {end0:.3f}; trial 1 {start1:.3f} .. {end1:.3f}")
    assert start0 < end1 and start1 < end0, "the two trials trained one after the other"
    for record in records:
        run = record.run
        assert run is not None and run.engine_name == "ray"
        assert run.history["validation.combined.loss"].notna().all()
        assert len(run.steps) > 0  # per-step events, for the live curves and the trial ETA
        # the trial wrote its run folder on the storage; its model came home and loads
        folder = storage / run.id
        assert (folder / "model").is_dir() and (folder / "checkpoints").is_dir()
        assert (run.directory / "model").is_dir() and run.model is not None
        pointer = json.loads((run.directory / "checkpoints" / "stored_at.json").read_text())
        assert Path(pointer["checkpoints"]) == folder.resolve() / "checkpoints"
        assert (run.directory / "worker.log").is_file()  # the actor's output, not the cell
    best = search.best
    assert best is not None and best["metric"] == min(trials["metric"][:2])
    stats = json.loads((search.directory / STATISTICS_FILE).read_text())
    assert len(stats["hyperopt_results"]) == 2
    journal = [
        json.loads(line) for line in (search.directory / JOURNAL_FILE).read_text().splitlines()
    ]
    ends = {e["trial"]: e["state"] for e in journal if e["event"] == "trial_finished"}
    assert ends == {0: "completed", 1: "completed", 2: "pruned"}
