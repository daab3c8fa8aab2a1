"""Token-aware step time: a language model's step costs a constant plus a per-token cost.

With each batch padded to its longest row, step times follow the padded tokens, which
vary a lot from batch to batch. Once the engine has ordered an epoch it knows every
step's padded tokens (``EpochPlanned``), so the ETA sums a step-time model over the steps
still to come instead of counting them:

    step time = level x w(tokens),   w(t) = (1 - s - q) + s x u + q x u^2,   u = t / t_ref

``s`` and ``q`` (the shares of a step at ``t_ref`` tokens that grow with its tokens and
with their square) are fitted robustly (Huber) on the raw step times of the current regime's
stable part and re-fitted as it grows (:func:`fit_shape`; ``q`` only where the data ask for
it: attention over long rows); ``t_ref`` is the planned mean. :class:`TokenRate` feeds
the step times divided by ``w`` to the same
:class:`~ludwig_nb.core.eta.step_time.StepRate` as ordinary runs, so warm-up detection,
regime changes (a throttle slows both parts alike), the straggler share and the interval
all work on a series that no longer swings with the batch's length. When the shape moves, the
steps are replayed through a fresh ``StepRate`` (the known regime changes with them).
With equal tokens in every step ``w`` is 1 and everything is the step-count ETA.

:class:`TokenPlan` holds the planned tokens per step. O(1) amortised per step.
"""

from __future__ import annotations

import dataclasses
import math
from array import array
from collections.abc import Sequence

from ludwig_nb.core.eta import constants as const
from ludwig_nb.core.eta.plan import EtaState
from ludwig_nb.core.eta.stats import MAD_TO_SD, median
from ludwig_nb.core.eta.step_time import StepRate

__all__ = ["Shape", "TokenPlan", "TokenRate", "fit_shape", "huber_fit", "huber_line"]


def huber_line(
    x: Sequence[float], y: Sequence[float], iterations: int = 20
) -> tuple[float, float] | None:
    """A robust straight line ``y = a + b x``: :func:`huber_fit` with one regressor.

    Returns:
        ``(a, b)``, or ``None`` under 3 points or when ``x`` does not vary.
    """
    fit = huber_fit([x], y, iterations)
    return None if fit is None else (fit[0][0], fit[0][1])


def huber_fit(
    columns: Sequence[Sequence[float]], y: Sequence[float], iterations: int = 20
) -> tuple[list[float], float] | None:
    """Robust least squares ``y = c0 + c1 x1 + ...``: Huber M-estimate by reweighting.

    The scale is the normal-scaled MAD of the residuals, the tuning constant ``HUBER_C`` of
    it (95 % efficiency on normal noise, bounded influence of stragglers).

    Returns:
        ``([c0, c1, ...], residual scale)``, or ``None`` with fewer points than three per
        coefficient or regressors that do not vary.
    """
    n, k = len(y), len(columns) + 1
    if n < 3 * k or any(len(c) != n for c in columns):
        return None
    rows = [[1.0, *(c[i] for c in columns)] for i in range(n)]
    weights = [1.0] * n
    fit: tuple[list[float], float] | None = None
    for _ in range(iterations):
        coefficients = _weighted_least_squares(rows, y, weights)
        if coefficients is None:
            return None
        residuals = [yi - _dot(coefficients, r) for r, yi in zip(rows, y, strict=True)]
        scale = MAD_TO_SD * median([abs(r) for r in residuals])
        fit = (coefficients, scale)
        if scale <= 0:
            return fit
        c = const.HUBER_C * scale
        new = [1.0 if abs(r) <= c else c / abs(r) for r in residuals]
        if max(abs(u - v) for u, v in zip(new, weights, strict=True)) < 1e-4:
            break
        weights = new
    return fit


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _weighted_least_squares(
    rows: Sequence[Sequence[float]], y: Sequence[float], w: Sequence[float]
) -> list[float] | None:
    """Solve the weighted normal equations by Gaussian elimination; None when singular."""
    k = len(rows[0])
    a = [
        [sum(wi * r[i] * r[j] for wi, r in zip(w, rows, strict=True)) for j in range(k)]
        for i in range(k)
    ]
    b = [sum(wi * r[i] * yi for wi, r, yi in zip(w, rows, y, strict=True)) for i in range(k)]
    scale = max(abs(a[i][i]) for i in range(k)) or 1.0
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) <= 1e-10 * scale:
            return None
        a[col], a[pivot], b[col], b[pivot] = a[pivot], a[col], b[pivot], b[col]
        for r in range(col + 1, k):
            f = a[r][col] / a[col][col]
            a[r] = [x - f * yv for x, yv in zip(a[r], a[col], strict=True)]
            b[r] -= f * b[col]
    out = [0.0] * k
    for i in range(k - 1, -1, -1):
        out[i] = (b[i] - sum(a[i][j] * out[j] for j in range(i + 1, k))) / a[i][i]
    return out


class TokenPlan:
    """Planned padded tokens per step (0-based); steps no plan covers count the mean."""

    def __init__(self) -> None:
        self._tokens: array[float] = array("d")  # NaN where unknown
        self._prefix_cache: tuple[array[float], array[float], array[int]] | None = None
        self._seen = [0.0, 0.0, 0]  # steps' own counts (sum, sum of squares, n): no plan

    def plan(self, first_step: int, tokens: Sequence[float]) -> None:
        """Steps ``first_step``, ``first_step + 1``, ... will compute ``tokens`` each."""
        end = first_step + len(tokens)
        if end > len(self._tokens):
            self._tokens.extend([math.nan] * (end - len(self._tokens)))
        for i, value in enumerate(tokens):
            self._tokens[first_step + i] = float(value)
        self._prefix_cache = None

    def observe(self, tokens: float) -> None:
        """A step computed ``tokens`` (the fallback mean when nothing is planned)."""
        self._seen[0] += tokens
        self._seen[1] += tokens * tokens
        self._seen[2] += 1

    @property
    def planned(self) -> bool:
        """Has any step been planned?"""
        return bool(self._prefix()[2][-1])

    def mean(self, power: int = 1) -> float | None:
        """Mean tokens of the planned steps, else of the steps seen, else ``None``.

        ``power`` 2: the mean of their squares.
        """
        sums, squares, count = self._prefix()
        if count[-1]:
            return (sums if power == 1 else squares)[-1] / count[-1]
        n = int(self._seen[2])
        return self._seen[power - 1] / n if n else None

    def at(self, step: int) -> float | None:
        """Tokens of ``step``: planned, else the mean (``None`` with no basis)."""
        if 0 <= step < len(self._tokens) and not math.isnan(self._tokens[step]):
            return self._tokens[step]
        return self.mean()

    def total(self, lo: int, hi: int, power: int = 1) -> float:
        """Tokens of steps ``lo`` .. ``hi - 1``; unknown steps count the mean (0 with no basis).

        ``power`` 2: the sum of their squares.
        """
        if hi <= lo:
            return 0.0
        sums, squares, count = self._prefix()
        values = sums if power == 1 else squares
        n = len(self._tokens)
        a, b = min(max(lo, 0), n), min(max(hi, 0), n)
        missing = (hi - lo) - (count[b] - count[a])
        return values[b] - values[a] + missing * (self.mean(power) or 0.0)

    def _prefix(self) -> tuple[array[float], array[float], array[int]]:
        if self._prefix_cache is None:
            sums, squares, counts = array("d", [0.0]), array("d", [0.0]), array("q", [0])
            for value in self._tokens:
                known = not math.isnan(value)
                sums.append(sums[-1] + (value if known else 0.0))
                squares.append(squares[-1] + (value * value if known else 0.0))
                counts.append(counts[-1] + (1 if known else 0))
            self._prefix_cache = (sums, squares, counts)
        return self._prefix_cache


@dataclasses.dataclass(frozen=True)
class Shape:
    """How a step's time grows with its padded tokens, relative to a ``t_ref``-token step.

    ``weight(t) = (1 - linear - quadratic) + linear u + quadratic u^2`` with ``u = t / t_ref``:
    ``linear`` is the share that grows with the tokens (the matrix products), ``quadratic``
    the share that grows with their square (attention over long rows, where the steps show
    it). Both 0 is the step-count ETA.
    """

    linear: float = 0.0
    quadratic: float = 0.0

    @property
    def share(self) -> float:
        """The part of a ``t_ref``-token step that grows with its tokens (0..1)."""
        return self.linear + self.quadratic

    def weight(self, u: float) -> float:
        """A step of ``u`` times ``t_ref`` tokens, in ``t_ref``-token steps (> 0)."""
        constant = 1.0 - self.share
        return max(const.TOKEN_MIN_WEIGHT, constant + self.linear * u + self.quadratic * u * u)

    def distance(self, other: Shape) -> float:
        """How far two shapes are apart (sum of absolute share differences)."""
        return abs(self.linear - other.linear) + abs(self.quadratic - other.quadratic)


def fit_shape(tokens: Sequence[float], seconds: Sequence[float], reference: float) -> Shape | None:
    """The :class:`Shape` of steps of ``tokens`` padded tokens that took ``seconds``.

    A robust line in ``u = tokens / reference``; the quadratic term is kept only where the
    data ask for it: a positive ``u^2`` coefficient that cuts the residual scale by
    ``TOKEN_QUADRATIC_GAIN`` or more, with no negative part. ``None`` when the tokens do
    not vary enough (``TOKEN_MIN_CV``) to tell.
    """
    mean = sum(tokens) / len(tokens)
    spread = math.sqrt(sum((v - mean) ** 2 for v in tokens) / len(tokens))
    if mean <= 0 or spread < const.TOKEN_MIN_CV * mean:
        return None
    u = [t / reference for t in tokens]
    line = huber_fit([u], seconds)
    if line is None:
        return None
    (a, b), scale = line
    curve = huber_fit([u, [v * v for v in u]], seconds)
    if curve is not None and len(u) >= 2 * const.TOKEN_FIT_MIN:
        (qa, qb, qc), q_scale = curve
        gain = q_scale <= (1.0 - const.TOKEN_QUADRATIC_GAIN) * scale
        if gain and qc > 0 and qa >= 0 and qb >= 0:
            level = qa + qb + qc
            return Shape(qb / level, qc / level)
    if b <= 0:
        return Shape()
    if a <= 0:
        return Shape(1.0)
    return Shape(b / (a + b))


class TokenRate:
    """Seconds per step at ``t_ref`` tokens in the current regime, and its :class:`Shape`.

    The same questions as :class:`StepRate` (``state``, ``step_s``, ``variance``,
    ``level_error``, ``new_regime``), in seconds per step of ``t_ref`` tokens;
    :meth:`weight` converts to a step of any size.

    Args:
        prior_s: the step time of a ``t_ref``-token step before any step (a pilot's), or
            ``None``.
        reference: ``t_ref``, the tokens of a typical step (the plan's mean).
        shape: before it is fitted (a pilot's; ``None``: ``TOKEN_SHARE_PRIOR``, linear).
    """

    def __init__(self, prior_s: float | None, reference: float, shape: Shape | None = None) -> None:
        self._prior_s = prior_s
        self._ref = max(reference, 1.0)
        self._shape = shape or Shape(const.TOKEN_SHARE_PRIOR)
        self._d: array[float] = array("d")  # regular step seconds, raw
        self._t: array[float] = array("d")  # their padded tokens
        self._regimes: list[tuple[int, float | None]] = []  # known changes, to replay
        self._rate = StepRate(prior_s)
        self._fitted_on = 0  # stable steps behind the last fit
        self.rebuilds = 0

    @property
    def shape(self) -> Shape:
        """How a step's time grows with its tokens (see :class:`Shape`)."""
        return self._shape

    @property
    def share(self) -> float:
        """The fraction of a ``t_ref``-token step that grows with its tokens."""
        return self._shape.share

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
        return self._shape.weight(tokens / self._ref)

    def weights(self, steps: int, tokens: float, squares: float) -> float:
        """The summed weight of ``steps`` steps of ``tokens`` in all.

        ``squares``: the sum of each step's tokens squared.
        """
        shape, ref = self._shape, self._ref
        constant = 1.0 - shape.share
        return constant * steps + shape.linear * tokens / ref + shape.quadratic * squares / ref**2

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
        """Re-fit the shape on the stable part when it has grown by 10 %; replay if it moved."""
        span = self._rate.stable_span
        if span is None:
            return
        lo, end = span
        lo = max(lo, end - const.BULK_WINDOW)
        n = end - lo
        if n < const.TOKEN_FIT_MIN or n < self._fitted_on * (1.0 + const.REVISIT_GROWTH):
            return
        self._fitted_on = n
        shape = fit_shape(self._t[lo:end], self._d[lo:end], self._ref)
        if shape is not None and shape.distance(self._shape) > const.TOKEN_SHARE_TOL:
            self._shape = shape
            self._replay()

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
