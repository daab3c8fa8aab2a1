import pytest

from ludwig_nb.core.eta.selfcheck import SelfCheck


def _prefix(values: list[float]) -> list[float]:
    out = [0.0]
    for v in values:
        out.append(out[-1] + v)
    return out


def test_predictions_that_missed_by_a_fifth_score_its_square():
    check = SelfCheck()
    for at in (20, 40, 60):
        assert check.due(at)
        check.record(at, 1.0)
    # From step 20 on every step took 1.2 s: each prediction missed by log(1.2).
    prefix = _prefix([1.0] * 20 + [1.2] * 100)
    error = check.level_error(prefix, (0,), var=0.0)
    assert error == pytest.approx(0.1823**2, rel=0.01)


def test_nothing_is_recorded_while_not_stable():
    check = SelfCheck()
    check.record(20, None)
    assert not check.due(21)
    assert check.level_error(_prefix([1.0] * 100), (0,), var=0.0) == 0.0
