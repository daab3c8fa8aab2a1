"""Token-aware step time: a language model's step costs a constant plus a per-token cost.

With each batch padded to its longest row, step times follow the padded tokens, which
vary a lot from batch to batch. Once the engine has ordered an epoch it knows every
step's padded tokens (``EpochPlanned``), so the ETA sums a step-time model over the steps
still to come instead of counting them:

    step time = level x w(tokens),   w(t) = (1 - s) + s x t / t_ref

``s`` (the token share of a step at ``t_ref`` tokens, 0..1) is fitted robustly (Huber) on
the raw step times of the current regime's stable part and re-fitted as it grows; ``t_ref``
is the planned mean. :class:`TokenRate` feeds the step times divided by ``w`` to the same
:class:`~ludwig_nb.core.eta.step_time.StepRate` as ordinary runs, so warm-up detection,
regime changes (a throttle slows both parts alike), the straggler share and the interval
all work on a series that no longer swings with the batch's length. When ``s`` moves, the
steps are replayed through a fresh ``StepRate`` (the known regime changes with them).
With equal tokens in every step ``w`` is 1 and everything is the step-count ETA.

:class:`TokenPlan` holds the planned tokens per step. O(1) amortised per step.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence

from ludwig_nb.core.eta import constants as const
from ludwig_nb.core.eta.plan import EtaState
from ludwig_nb.core.eta.stats import MAD_TO_SD, median
from ludwig_nb.core.eta.step_time import StepRate

__all__ = ["TokenPlan", "TokenRate", "huber_line"]


def huber_line(
    x: Sequence[float], y: Sequence[float], iterations: int = 20
) -> tuple[float, float] | None:
    """A robust straight line ``y = a + b x``: Huber M-estimate by reweighted least squares.

    The scale is the normal-scaled MAD of the residuals, the tuning constant
    ``HUBER_C`` of it (95 % efficiency on normal noise, bounded influence of stragglers).

    Returns:
        ``(a, b)``, or ``None`` under 3 points or when ``x`` does not vary.
    """
    n = len(x)
    if n < 3 or n != len(y):
        return None
    weights = [1.0] * n
    line: tuple[float, float] | None = None
    for _ in range(iterations):
        line = _weighted_line(x, y, weights)
        if line is None:
            return None
        a, b = line
        residuals = [yi - a - b * xi for xi, yi in zip(x, y, strict=True)]
        scale = MAD_TO_SD * median([abs(r) for r in residuals])
        if scale <= 0:
            return line
        c = const.HUBER_C * scale
        new = [1.0 if abs(r) <= c else c / abs(r) for r in residuals]
        if max(abs(u - v) for u, v in zip(new, weights, strict=True)) < 1e-4:
            break
        weights = new
    return line


def _weighted_line(
    x: Sequence[float], y: Sequence[float], w: Sequence[float]
) -> tuple[float, float] | None:
    sw = sum(w)
    mx = sum(wi * xi for wi, xi in zip(w, x, strict=True)) / sw
    my = sum(wi * yi for wi, yi in zip(w, y, strict=True)) / sw
    sxx = sum(wi * (xi - mx) ** 2 for wi, xi in zip(w, x, strict=True))
    if sxx <= 1e-12 * max(1.0, mx * mx) * sw:
        return None
    sxy = sum(wi * (xi - mx) * (yi - my) for wi, xi, yi in zip(w, x, y, strict=True))
    b = sxy / sxx
    return my - b * mx, b


class TokenPlan:
    """Planned padded tokens per step (0-based); steps no plan covers count the mean."""

    def __init__(self) -> None:
        self._tokens: array[float] = array("d")  # NaN where unknown
        self._sum: array[float] | None = None  # prefix sums of the known values
        self._count: array[int] | None = None  # prefix counts of the known values
        self._seen_sum = 0.0  # steps' own counts, for a run that plans nothing
        self._seen_n = 0

    def plan(self, first_step: int, tokens: Sequence[float]) -> None:
        """Steps ``first_step``, ``first_step + 1``, ... will compute ``tokens`` each."""
        end = first_step + len(tokens)
        if end > len(self._tokens):
            self._tokens.extend([math.nan] * (end - len(self._tokens)))
        for i, value in enumerate(tokens):
            self._tokens[first_step + i] = float(value)
        self._sum = self._count = None

    def observe(self, tokens: float) -> None:
        """A step computed ``tokens`` (the fallback mean when nothing is planned)."""
        self._seen_sum += tokens
        self._seen_n += 1

    @property
    def planned(self) -> bool:
        """Has any step been planned?"""
        self._prefix()
        return bool(self._count and self._count[-1])

    def mean(self) -> float | None:
        """Mean tokens of the planned steps, else of the steps seen, else ``None``."""
        total, count = self._prefix()
        if count[-1]:
            return total[-1] / count[-1]
        return self._seen_sum / self._seen_n if self._seen_n else None

    def at(self, step: int) -> float | None:
        """Tokens of ``step``: planned, else the mean (``None`` with no basis)."""
        if 0 <= step < len(self._tokens) and not math.isnan(self._tokens[step]):
            return self._tokens[step]
        return self.mean()

    def total(self, lo: int, hi: int) -> float:
        """Tokens of steps ``lo`` .. ``hi - 1`` (unknown ones at the mean; 0 with no basis)."""
        if hi <= lo:
            return 0.0
        total, count = self._prefix()
        n = len(self._tokens)
        a, b = min(max(lo, 0), n), min(max(hi, 0), n)
        known = total[b] - total[a]
        missing = (hi - lo) - (count[b] - count[a])
        return known + missing * (self.mean() or 0.0)

    def _prefix(self) -> tuple[array[float], array[int]]:
        if self._sum is None or self._count is None:
            sums, counts = array("d", [0.0]), array("q", [0])
            for value in self._tokens:
                unknown = math.isnan(value)
                sums.append(sums[-1] + (0.0 if unknown else value))
                counts.append(counts[-1] + (0 if unknown else 1))
            self._sum, self._count = sums, counts
        return self._sum, self._count


class TokenRate:
    """Seconds per step at ``t_ref`` tokens in the current regime, and the token share.

    The same questions as :class:`StepRate` (``state``, ``step_s``, ``variance``,
    ``level_error``, ``new_regime``), in seconds per step of ``t_ref`` tokens;
    :meth:`weight` converts to a step of any size.

    Args:
        prior_s: the step time of a ``t_ref``-token step before any step (a pilot's), or
            ``None``.
        reference: ``t_ref``, the tokens of a typical step (the plan's mean).
        share: ``s`` before it is fitted (a pilot's; ``None``: ``TOKEN_SHARE_PRIOR``).
    """

    def __init__(self, prior_s: float | None, reference: float, share: float | None = None) -> None:
        self._prior_s = prior_s
        self._ref = max(reference, 1.0)
        self._share = const.TOKEN_SHARE_PRIOR if share is None else min(1.0, max(0.0, share))
        self._d: array[float] = array("d")  # regular step seconds, raw
        self._t: array[float] = array("d")  # their padded tokens
        self._regimes: list[tuple[int, float | None]] = []  # known changes, to replay
        self._rate = StepRate(prior_s)
        self._fitted_on = 0  # stable steps behind the last fit
        self.rebuilds = 0

    @property
    def share(self) -> float:
        """``s``: the fraction of a ``t_ref``-token step that grows with its tokens."""
        return self._share

    @property
    def reference(self) -> float:
        """``t_ref`` (tokens)."""
        return self._ref

    @property
    def count(self) -> int:
        """Regular steps seen."""
        return len(self._d)

    @property
    def state(self) -> EtaState:
        """As :attr:`StepRate.state`."""
        return self._rate.state

    @property
    def stable_span(self) -> tuple[int, int] | None:
        """As :attr:`StepRate.stable_span` (indices of regular steps)."""
        return self._rate.stable_span

    def weight(self, tokens: float) -> float:
        """A ``tokens``-token step's time over a ``t_ref``-token one's (ratio, > 0)."""
        return max(const.TOKEN_MIN_WEIGHT, 1.0 - self._share + self._share * tokens / self._ref)

    def weights(self, steps: int, tokens: float) -> float:
        """The summed weight of ``steps`` steps that compute ``tokens`` in all."""
        return (1.0 - self._share) * steps + self._share * tokens / self._ref

    def add(self, duration: float, tokens: float) -> None:
        """One regular step took ``duration`` seconds on ``tokens`` padded tokens."""
        self._d.append(duration)
        self._t.append(tokens)
        self._rate.add(duration / self.weight(tokens))
        self._maybe_refit()

    def new_regime(self, scale: float | None = None) -> None:
        """As :meth:`StepRate.new_regime`; remembered for a replay."""
        self._regimes.append((len(self._d), scale))
        self._rate.new_regime(scale)

    def step_s(self, steps_left: int = 0) -> float | None:
        """Seconds per ``t_ref``-token step (see :meth:`StepRate.step_s`), or ``None``."""
        return self._rate.step_s(steps_left)

    def variance(self, step_s: float) -> tuple[float, float, int]:
        """As :meth:`StepRate.variance`, per ``t_ref``-token step."""
        return self._rate.variance(step_s)

    def level_error(self, var: float) -> float:
        """As :meth:`StepRate.level_error`."""
        return self._rate.level_error(var)

    def _maybe_refit(self) -> None:
        """Re-fit ``s`` on the stable part when it has grown by 10 %; replay if it moved."""
        span = self._rate.stable_span
        if span is None:
            return
        lo, end = span
        lo = max(lo, end - const.BULK_WINDOW)
        n = end - lo
        if n < const.TOKEN_FIT_MIN or n < self._fitted_on * (1.0 + const.REVISIT_GROWTH):
            return
        self._fitted_on = n
        share = self._fit(lo, end)
        if share is not None and abs(share - self._share) > const.TOKEN_SHARE_TOL:
            self._share = share
            self._replay()

    def _fit(self, lo: int, end: int) -> float | None:
        """``s`` from a robust line through the raw steps ``lo:end`` (None: no spread)."""
        tokens = self._t[lo:end]
        mean = sum(tokens) / len(tokens)
        spread = math.sqrt(sum((v - mean) ** 2 for v in tokens) / len(tokens))
        if mean <= 0 or spread < const.TOKEN_MIN_CV * mean:
            return None
        line = huber_line(tokens, self._d[lo:end])
        if line is None:
            return None
        a, b = line
        if b <= 0:
            return 0.0
        if a <= 0:
            return 1.0
        return b * self._ref / (a + b * self._ref)

    def _replay(self) -> None:
        """Feed every step again, divided by the new weights, to a fresh ``StepRate``."""
        rate = StepRate(self._prior_s)
        changes = iter(self._regimes)
        nxt = next(changes, None)
        for i, (d, t) in enumerate(zip(self._d, self._t, strict=True)):
            while nxt is not None and nxt[0] == i:
                rate.new_regime(nxt[1])
                nxt = next(changes, None)
            rate.add(d / self.weight(t))
        while nxt is not None:
            rate.new_regime(nxt[1])
            nxt = next(changes, None)
        self._rate = rate
        self.rebuilds += 1
