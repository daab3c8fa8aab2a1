"""The ETA benchmarks keep running: the post-change scorer and the floor's informed
estimators on one synthetic throttling run (seconds of CPU, no timing asserted)."""

from benchmarks.eta.floor import VARIANTS, _score
from benchmarks.eta.replay import AFTER_CHANGE, OURS, replay
from benchmarks.eta.scenarios import generate


def test_every_variant_scores_every_post_change_offset():
    trace = generate("throttle", seed=3, steps=2000)
    for variant in VARIANTS:
        errors = _score(trace, variant)
        assert sorted(errors) == list(AFTER_CHANGE)
        assert all(0.0 <= e < 1.0 for e in errors.values()), (variant, errors)


def test_told_estimator_matches_ours_once_the_change_is_detected():
    # By +20 % of the run the CUSUM has found the change; telling it changes little.
    trace = generate("throttle", seed=3, steps=2000)
    ours, told = _score(trace, "ours"), _score(trace, "told start")
    assert abs(ours[0.20] - told[0.20]) < 0.02


def test_replay_scores_ours_after_the_change():
    scores = replay(generate("batch_change", seed=1, steps=2000))
    assert len(scores.post[OURS]) == sum(len(v) for v in scores.post_at.values())
    assert scores.post_at  # the change was scored at its offsets
