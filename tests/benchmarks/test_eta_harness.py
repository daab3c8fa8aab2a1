"""The outside ETA check (benchmarks/eta/harness.py) builds what it says and scores it."""

from benchmarks.eta import harness


def _scores(name: str, seeds: range = range(2)) -> harness.Scores:
    scores = harness.Scores()
    for seed in seeds:
        harness.score(harness.generate(name, seed), name, scores)
    return scores


def test_a_run_is_what_the_schedule_says():
    run = harness.generate("steady", 0)
    steps = [op for op in run.ops if op.kind == "step"]
    assert [op.step for op in steps] == list(range(run.schedule.total_steps))
    evals = sum(op.kind == "evaluation" for op in run.ops)
    assert evals == len(run.schedule.evaluations_after)
    ends = [op.end for op in run.ops]
    assert ends == sorted(ends)


def test_the_batch_change_hands_the_estimator_a_new_plan():
    run = harness.generate("batch", 1)
    plans = [op.schedule for op in run.ops if op.kind == "schedule"]
    assert len(plans) == 1
    assert plans[0] is not None
    assert plans[0].batch_size == 64
    assert plans[0].total_steps < run.schedule.total_steps
    assert run.change is not None


def test_the_pause_is_scored_against_a_truth_without_it():
    scores = _scores("pause")
    # The whole-run mean counts the 10-minute pause as training; ours excludes it.
    ours, peer = scores.ape["ours"], scores.ape["hf/keras"]
    assert sum(ours) / len(ours) < sum(peer) / len(peer)
    assert scores.pause_shift
    assert max(scores.pause_shift) < 0.5


def test_behaviours_are_measured_on_every_run():
    scores = _scores("slowdown")
    assert len(scores.adjusting) == 2
    assert len(scores.warm_number) == 2
    assert scores.post
    assert scores.mid_eval
    steady = _scores("steady", range(1))
    assert len(steady.straggler_shift) == 1
    assert 0.0 <= steady.straggler_shift[0] < 1.0
