"""``executor: {type: ray}``: a search's trials as Ray Tune trials on a local Ray (marker
``ray``; scripts/test_ray.sh runs it in the Ray venv). Each trial is the built-in loop in its
Tune actor; ASHA prunes on the metric reported at each evaluation."""

from __future__ import annotations

import json

import pytest

from tests.engines.ray.conftest import table

pytestmark = [pytest.mark.ray, pytest.mark.timeout(600)]

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
    scheduler: {type: asha, grace_period: 1, reduction_factor: 2, max_t: 3}
"""


def test_two_concurrent_tune_trials_and_one_pruned_by_asha_at_its_first_evaluation(
    ray_session, tmp_path
):
    from ludwig_nb.runs import hyperopt
    from ludwig_nb.runs.search import JOURNAL_FILE, STATISTICS_FILE

    search = hyperopt(CONFIG, table(400), name="tune", results_dir=tmp_path / "results",
                      registry_dir=tmp_path / "registry")  # fmt: skip
    search.wait(240)
    assert search.is_done, "the Tune search did not end within 240 s"
    assert search.error is None, search.error
    trials = search.trials
    assert list(trials["state"]) == ["completed", "completed", "pruned"], trials
    # the first two train the same (same seed): ASHA's cutoff at a rung (strict) never stops
    # either, whichever reports first; the third is far worse at its first evaluation
    assert list(trials["trainer.learning_rate"]) == pytest.approx([0.05, 0.05, 1e-7])
    records = search.records()
    assert [r.epoch for r in records] == [3, 3, 1]  # pruned right after its first evaluation
    assert len(records[2].curve) == 1
    assert search.slots == 2
    # each trial is an ordinary run: its events came live from the Tune actor
    for record in records:
        run = record.run
        assert run is not None and run.engine_name == "ray"
        assert run.history["validation.combined.loss"].notna().all()
        assert len(run.steps) > 0  # per-step events, for the live curves and the trial ETA
    pruned_run = records[2].run
    assert pruned_run.status == "stopped" and "pruned" in pruned_run.state.reason
    assert (pruned_run.directory / "worker.log").is_file()  # the actor's output, not the cell
    best = search.best
    assert best is not None and best["metric"] == min(trials["metric"][:2])
    stats = json.loads((search.directory / STATISTICS_FILE).read_text())
    assert len(stats["hyperopt_results"]) == 2
    journal = [
        json.loads(line) for line in (search.directory / JOURNAL_FILE).read_text().splitlines()
    ]
    ends = {e["trial"]: e["state"] for e in journal if e["event"] == "trial_finished"}
    assert ends == {0: "completed", 1: "completed", 2: "pruned"}
    # the first two should train at the same time, each in its own Tune actor. On a quiet
    # 2-core machine the second started only when the first ended (Tune warns that
    # max_concurrent_trials is ignored for a SearchGenerator): a known gap, reported as such
    first, second = records[0], records[1]
    if not (first.started < second.ended and second.started < first.ended):
        pytest.xfail("the two Tune trials ran one after the other, not concurrently")
