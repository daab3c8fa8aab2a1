"""Round, few, inside: axis ticks over many ranges; EMA debiasing."""

import math
import random

import pytest

from ludwig_nb.core.ticks import ema, log_ticks, nice_ticks, tick_label


def _is_round(step: float) -> bool:
    mantissa = step / 10 ** math.floor(math.log10(step))
    return any(math.isclose(mantissa, m, rel_tol=1e-3) for m in (1, 2, 2.5, 5, 10))


@pytest.mark.parametrize("seed", range(200))
def test_linear_ticks_are_round_few_and_cover_the_data(seed):
    rng = random.Random(seed)
    low = rng.uniform(-1000, 1000) * 10 ** rng.randint(-4, 3)
    high = low + abs(rng.gauss(0, 1)) * 10 ** rng.randint(-5, 4) + 1e-12
    ticks, axis_low, axis_high = nice_ticks(low, high, max_ticks=5)
    assert 2 <= len(ticks) <= 5
    assert axis_low <= low and high <= axis_high  # no data outside the axis
    step = ticks[1] - ticks[0]
    assert _is_round(step)
    labels = [tick_label(t, step) for t in ticks]
    assert len(set(labels)) == len(labels)  # no two ticks read the same


def test_step_axes_start_at_zero_and_end_at_the_last_step():
    ticks, low, high = nice_ticks(0, 2585, max_ticks=6, outward=False)
    assert (low, high) == (0, 2585) and ticks == [0, 1000, 2000]
    ticks, low, _ = nice_ticks(-3, 50, floor=0)
    assert low == 0 and ticks[0] == 0  # never a negative step


def test_log_ticks_are_decades_or_1_2_5_and_reject_nonpositive_bounds():
    ticks, low, high = log_ticks(0.05, 2.3)
    assert ticks == [0.03, 0.1, 0.3, 1.0, 3.0] and low <= 0.05 and high >= 2.3
    assert log_ticks(0.2, 0.9)[0] == [0.2, 0.5, 1.0]
    ticks, _, _ = log_ticks(1e-5, 30)
    assert all(math.log10(t).is_integer() for t in ticks) and len(ticks) <= 7
    with pytest.raises(ValueError, match="positive"):
        log_ticks(0, 1)


def test_labels_read_like_numbers():
    assert tick_label(2000, 1000) == "2,000"
    assert tick_label(0.25, 0.05) == "0.25"
    assert tick_label(0.875, 0.025) == "0.875"
    assert tick_label(0.001, log=True) == "0.001" and tick_label(1e-5, log=True) == "1e-05"
    assert tick_label(math.nan) == ""


def test_ema_is_debiased_and_smooths():
    assert ema([3.0], 10) == [3.0]  # not pulled toward zero
    noisy = [1.0 + (0.5 if i % 2 else -0.5) for i in range(200)]
    smooth = ema(noisy, 20)
    assert max(smooth[50:]) - min(smooth[50:]) < 0.1


def test_bounded_ticks_stop_at_the_quantitys_own_range():
    from ludwig_nb.core.ticks import bounded_ticks, nice_ticks

    _, _, top = nice_ticks(-20.0, 0.9)
    assert top > 1  # a round axis would run past r2's most
    ticks, low, high = bounded_ticks(-20.0, 0.9, (None, 1.0))
    assert high == 1.0 and max(ticks) <= 1.0 and low <= -20.0
    ticks, low, high = bounded_ticks(0.03, 0.97, (0.0, 1.0))
    assert (low, high) == (0.0, 1.0) and all(0.0 <= t <= 1.0 for t in ticks)
    assert bounded_ticks(-20.0, 0.9, (None, None)) == nice_ticks(-20.0, 0.9)
