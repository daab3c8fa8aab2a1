"""``ThrottleWatch``: ``action: throttle`` alarms, applied to the running runs.

For every throttle rule and GPU it keeps a :class:`~ludwig_nb.core.throttle.ThrottleController`
fed with the sampler's readings; each run gets the lowest duty of the rules and GPUs it
uses through ``RunControl.set_pace`` (the engine idles between steps; no step changes).
It emits a ``Throttled`` event when the throttle engages or releases, when the duty moved
by ``report_step`` or more since the last event (at most one per ``report_gap`` seconds),
and every ``refresh_every`` seconds while throttled (fresh reading and idle time for the
dashboard and status.json; the ETA starts a regime only on a real change of duty).

A rule with ``power_limit: true`` first tries a board power cap (:class:`~ludwig_nb.gpu.
power_cap.PowerCap`, root only); when refused it says why once and duty-cycles instead.
:meth:`close` restores every power limit it set. Runs on the sampler thread.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from ludwig_nb.core.alarms import AlarmRule
from ludwig_nb.core.events import Event, Throttled
from ludwig_nb.core.gpu_sample import Snapshot
from ludwig_nb.core.throttle import ThrottleController, ThrottleDecision, gains_for

__all__ = ["PowerCapper", "ThrottleWatch"]

log = logging.getLogger(__name__)


class PowerCapper(Protocol):
    """What the watch needs to cap power (``ludwig_nb.gpu.power_cap.PowerCap``)."""

    def apply(self, index: int, watts: float) -> str:
        """Cap GPU ``index`` at ``watts`` W and return what was done, in words."""

    def restore(self) -> list[str]:
        """Put back every original power limit and return what was done, in words."""


@dataclasses.dataclass
class _Reported:
    duty: float = 1.0
    time: float = float("-inf")
    method: str = "duty"


@dataclasses.dataclass(frozen=True)
class _Limit:
    """The decision that limits one run now."""

    rule: AlarmRule
    device: int
    decision: ThrottleDecision
    method: str = "duty"


class ThrottleWatch:
    """Throttle rules of one alarm policy.

    ``power_capper``: makes the power capper on first use (default ``PowerCap()``); ``report_step``
    (duty), ``report_gap`` and ``refresh_every`` (seconds) bound the ``Throttled`` events.

    Args:
        rules: The policy's rules; only ``throttle`` ones are used.
        devices: The GPU indices watched; None for all.
    """

    def __init__(
        self,
        rules: Iterable[AlarmRule],
        devices: Iterable[int] | None = None,
        power_capper: Callable[[], PowerCapper] | None = None,
        report_step: float = 0.1,
        report_gap: float = 5.0,
        refresh_every: float = 10.0,
    ) -> None:
        self.rules = tuple(r for r in rules if r.action == "throttle")
        self.devices = None if devices is None else frozenset(devices)
        self._make_capper = power_capper or _default_capper
        self._capper: PowerCapper | None = None
        self._capped: dict[tuple[str, int], float] = {}  # (rule, device) -> W, cap set
        self._refused: dict[str, str] = {}  # rule name -> why the cap was refused
        self._controllers: dict[tuple[str, int], ThrottleController] = {}
        self._decisions: dict[tuple[str, int], ThrottleDecision] = {}
        self._reported: dict[int, _Reported] = {}  # id(target) -> last event
        self.report_step, self.report_gap = report_step, report_gap
        self.refresh_every = refresh_every

    def __bool__(self) -> bool:
        return bool(self.rules)

    def on_snapshot(self, snapshot: Snapshot, targets: list[Any]) -> None:
        """Feed one snapshot and pace every target (the alarm watch calls this)."""
        for rule in self.rules:
            for sample in snapshot.gpus:
                if self.devices is not None and sample.index not in self.devices:
                    continue
                self._feed(rule, sample, snapshot.time)
        for target in targets:
            self._pace(target, snapshot.time)

    def close(self, targets: Iterable[Any] = ()) -> None:
        """Release every run's pace and restore the power limits set."""
        for target in targets:
            target.control.set_pace(1.0)
        if self._capper is not None and self._capped:
            self._capper.restore()
        self._capped.clear()

    # -- control ---------------------------------------------------------------------
    def _feed(self, rule: AlarmRule, sample: Any, now: float) -> None:
        value, levels = rule.value(sample), rule.levels(sample)
        if levels is None:
            return
        key = (rule.name, sample.index)
        if rule.power_limit and self._try_cap(rule, sample.index, levels[0]):
            self._decisions[key] = ThrottleDecision(1.0, True, value or 0.0, levels[0], now)
            return
        controller = self._controllers.get(key)
        if controller is None:
            controller = ThrottleController(levels[0], gains_for(rule.metric, levels[0]))
            self._controllers[key] = controller
        controller.retarget(levels[0])
        self._decisions[key] = controller.update(value, now)

    def _try_cap(self, rule: AlarmRule, device: int, watts: float) -> bool:
        key = (rule.name, device)
        if key in self._capped:
            return True
        if rule.name in self._refused:
            return False
        if self._capper is None:
            self._capper = self._make_capper()
        why = self._capper.apply(device, watts)
        if why:
            self._refused[rule.name] = why
            log.warning(
                "ludwig_nb: cannot cap GPU %d at %.0f W (%s); holding it by spacing "
                "the training steps instead",
                device,
                watts,
                why,
            )
            return False
        self._capped[key] = watts
        return True

    def _limit(self, target: object) -> _Limit | None:
        best: _Limit | None = None
        for rule in self.rules:
            for (name, device), decision in self._decisions.items():
                if name != rule.name or not _uses(target, device) or not decision.engaged:
                    continue
                method = "power_limit" if (name, device) in self._capped else "duty"
                if best is None or decision.duty < best.decision.duty:
                    best = _Limit(rule, device, decision, method)
        return best

    def _pace(self, target: Any, now: float) -> None:
        limit = self._limit(target)
        duty = 1.0 if limit is None else limit.decision.duty
        reason = "" if limit is None else f"alarm:{limit.rule.name}"
        target.control.set_pace(duty, reason)
        last = self._reported.setdefault(id(target), _Reported())
        method = "duty" if limit is None else limit.method
        changed = (duty < 1.0) != (last.duty < 1.0) or method != last.method
        since = now - last.time
        drifted = abs(duty - last.duty) >= self.report_step and since >= self.report_gap
        holding = duty < 1.0 or method == "power_limit"
        refresh = limit is not None and holding and since >= self.refresh_every
        if not (changed or drifted or refresh):
            return
        self._reported[id(target)] = _Reported(duty, now, method)
        _emit(target, self._event(target, limit, duty, now))

    def _event(self, target: Any, limit: _Limit | None, duty: float, now: float) -> Throttled:
        idle = float(target.control.idle_seconds)
        if limit is None:
            return Throttled(time=now, duty=1.0, reason="released", idle_s=idle)
        d = limit.decision
        value = d.value if math.isfinite(d.value) else 0.0
        reason = f"alarm:{limit.rule.name}"
        if limit.rule.name in self._refused:
            reason += f" (power cap refused: {self._refused[limit.rule.name]})"
        return Throttled(
            time=now,
            duty=duty,
            reason=reason,
            device=limit.device,
            metric=limit.rule.metric,
            value=value,
            target=d.target,
            idle_s=idle,
            method=limit.method,
        )


def _default_capper() -> PowerCapper:
    from ludwig_nb.gpu.power_cap import PowerCap

    return PowerCap()


def _uses(target: Any, device: int) -> bool:
    return target.device_index is None or target.device_index == device


def _emit(target: Any, event: Event) -> None:
    try:
        target.emit(event)
    except Exception:  # one broken run must not stop the throttle for the others
        log.exception("ludwig_nb: could not deliver %s to a run", event.type)
