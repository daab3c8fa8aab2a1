"""``ThrottleController``: hold a GPU metric (°C or W) at a target by pacing the training loop.

The output is a **duty cycle** in ``[min_duty, 1]``: the fraction of wall time the loop
trains; the rest is idle time inserted between steps (``RunControl.set_pace``). Steps are
never skipped or changed, only spaced.

The law is a PI controller in velocity (incremental) form,
``u += kp * (e - e_prev) + ki * e * dt`` with ``e = target - value``, clamped to the duty
range. The velocity form cannot wind up: when the duty is clamped the integral is simply
not accumulated past the clamp (anti-windup by construction). Around it:

* **engage** when the metric comes within ``engage_band`` of the target while rising (or
  is at or above it): pacing starts before the target is crossed, so the overshoot of a
  heating card stays small; on engaging, the duty starts at a feed-forward estimate of the
  steady duty, ``(target - floor) / (value - floor)`` scaled from the current duty.
* **release** (duty 1.0, controller idle) only after the duty has sat at 1.0 and the metric
  has stayed ``release_band`` below the target for ``release_after`` seconds: the card is
  cool. The gap between engage and release is the hysteresis.
* a **deadband**: readings in ``[target - 2 * deadband, target]`` count as on target, so
  the integral does not chase the sensor's quantisation (NVML reports whole °C) and the
  hold sits at or below the target.

Gains are per unit of the metric; :func:`gains_for` gives defaults tuned on the simulated
card (first-order, 6-120 s time constants) for temperature and for power.
No clock is read here: :meth:`ThrottleController.update` takes ``now`` (seconds).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Protocol

__all__ = ["Gains", "ThrottleController", "ThrottleDecision", "describe_throttle", "gains_for"]

_UNITS = {"temperature": "°C", "power": "W"}


class _ThrottleFacts(Protocol):
    @property
    def duty(self) -> float: ...
    @property
    def device(self) -> int: ...
    @property
    def metric(self) -> str: ...
    @property
    def value(self) -> float: ...
    @property
    def target(self) -> float: ...
    @property
    def method(self) -> str: ...


def describe_throttle(event: _ThrottleFacts) -> str:
    """Describe the throttle in words.

    E.g. ``"throttled to 70 %: GPU 0 held at 82 °C, target 82 °C"`` (from a ``Throttled`` event
    or anything with its fields); "" when the duty is 1.0 and no power cap is set.
    """
    unit = _UNITS.get(event.metric, "")
    where = f"GPU {event.device}" if event.device >= 0 else "the GPU"
    reading = f"{event.value:.0f} {unit}".rstrip()
    target = f"{event.target:.0f} {unit}".rstrip()
    if event.method == "power_limit":
        return f"power capped at {target}: {where} draws {reading}"
    if event.duty >= 1.0:
        return ""
    return f"throttled to {event.duty * 100:.0f} %: {where} held at {reading}, target {target}"


@dataclasses.dataclass(frozen=True)
class Gains:
    """PI gains and bands in the metric's unit (°C or W).

    ``kp``: duty per unit of error; ``ki``: duty per unit of error per second;
    ``engage_band`` / ``release_band`` / ``deadband``: units; ``release_after``: seconds;
    ``floor``: the metric's idle level (°C ambient or W idle) for the feed-forward guess.
    """

    kp: float
    ki: float
    engage_band: float
    release_band: float
    deadband: float
    release_after: float = 30.0
    floor: float = 0.0


def gains_for(metric: str, target: float) -> Gains:
    """Default gains for ``metric`` ("temperature" in °C or "power" in W) at ``target``.

    Raises ``ValueError`` for another metric.
    """
    if metric == "temperature":
        return Gains(kp=0.06, ki=0.006, engage_band=3.0, release_band=4.0, deadband=0.5, floor=35.0)
    if metric == "power":
        scale = max(1.0, target)  # power errors are relative: 1 % of the target ~ 1 % duty
        return Gains(
            kp=0.2 / scale,
            ki=0.6 / scale,
            engage_band=0.03 * scale,
            release_band=0.1 * scale,
            deadband=0.005 * scale,
            floor=0.2 * scale,
        )
    raise ValueError(f"cannot throttle on {metric!r}: use temperature or power")


@dataclasses.dataclass(frozen=True)
class ThrottleDecision:
    """The controller's output at ``time``.

    ``duty`` in (0, 1], whether it is ``engaged``, and the reading and target it acted on.
    """

    duty: float
    engaged: bool
    value: float
    target: float
    time: float


class ThrottleController:
    """PI duty-cycle controller with anti-windup, feed-forward engagement and hysteresis.

    ``target``: the level to hold (°C or W); ``min_duty``: the lowest duty it will set
    (a run always makes progress). Raises ``ValueError`` on a non-finite target or a
    ``min_duty`` outside (0, 1].

    Args:
        target: The level to hold, °C or W.
        gains: The controller's gains and time constants.
        min_duty: The lowest duty cycle it sets, in (0, 1].
    """

    def __init__(self, target: float, gains: Gains, min_duty: float = 0.05) -> None:
        if not math.isfinite(target):
            raise ValueError(f"throttle target {target!r} is not a finite number")
        if not 0.0 < min_duty <= 1.0:
            raise ValueError(f"min_duty must be in (0, 1], got {min_duty}")
        self.target, self.gains, self.min_duty = float(target), gains, min_duty
        self.duty = 1.0
        self.engaged = False
        self._last: tuple[float, float] | None = None  # (time, value)
        self._error: float | None = None
        self._cool_since: float | None = None

    def retarget(self, target: float) -> None:
        """Change the target (a relative threshold resolved against a new sample)."""
        if math.isfinite(target):
            self.target = float(target)

    def update(self, value: float | None, now: float) -> ThrottleDecision:
        """Feed one reading (°C or W; None when unknown: the duty is kept) taken at ``now`` seconds.

        Returns the duty to apply until the next reading.
        """
        if value is None or not math.isfinite(value):
            return self._decision(math.nan, now)
        last, self._last = self._last, (now, value)
        dt = 0.0 if last is None else max(0.0, now - last[0])
        rising = last is not None and value > last[1]
        if not self.engaged:
            if value >= self.target or (rising and value >= self.target - self.gains.engage_band):
                self._engage(value)
            return self._decision(value, now)
        self._step(value, dt)
        self._maybe_release(value, now)
        return self._decision(value, now)

    # -- the law ---------------------------------------------------------------------
    def _engage(self, value: float) -> None:
        g = self.gains
        self.engaged = True
        self._cool_since = None
        excess = value - g.floor
        guess = 1.0 if excess <= 0 else self.duty * (self.target - g.floor) / excess
        self.duty = self._clamp(min(1.0, guess))
        self._error = self._dead(self.target - value)

    def _step(self, value: float, dt: float) -> None:
        g = self.gains
        error = self._dead(self.target - value)
        previous = error if self._error is None else self._error
        self._error = error
        self.duty = self._clamp(self.duty + g.kp * (error - previous) + g.ki * error * dt)

    def _maybe_release(self, value: float, now: float) -> None:
        cool = self.duty >= 1.0 and value <= self.target - self.gains.release_band
        if not cool:
            self._cool_since = None
            return
        if self._cool_since is None:
            self._cool_since = now
        elif now - self._cool_since >= self.gains.release_after:
            self.engaged, self._error, self._cool_since = False, None, None

    def _dead(self, error: float) -> float:
        # The hold band is [target - 2 * deadband, target]: "hold at or below" the target.
        band = self.gains.deadband
        error -= band
        if abs(error) <= band:
            return 0.0
        return error - math.copysign(band, error)

    def _clamp(self, duty: float) -> float:
        return min(1.0, max(self.min_duty, duty))

    def _decision(self, value: float, now: float) -> ThrottleDecision:
        return ThrottleDecision(self.duty, self.engaged, value, self.target, now)
