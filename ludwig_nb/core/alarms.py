"""GPU alarm policy: rules, debounce and hysteresis as a pure function of the samples.

A rule watches one metric on every GPU: ``temperature`` (°C, absolute or relative to the
device's own slowdown threshold, e.g. ``slowdown-5``), ``power`` (W drawn), ``memory``
(% of the total used) or ``throttle`` (a thermal or power slowdown reason is active). It
raises after ``consecutive`` samples at or above the threshold and clears after
``consecutive`` samples below ``clear_below`` (hysteresis). :class:`AlarmPolicy` keeps that
state per (rule, device) and returns the transitions; what to do with them (warn, pause,
stop a run, or ``throttle``: hold the metric at the threshold with ``core/throttle.py``'s
controller) is ``ludwig_nb.runs.alarm_watch``'s business.

No clock is read here: the caller passes ``now``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ludwig_nb.core.gpu_sample import POWER_REASONS, THERMAL_REASONS, GpuSample

__all__ = [
    "ACTIONS",
    "METRICS",
    "THROTTLE_METRICS",
    "AlarmPolicy",
    "AlarmRule",
    "AlarmTransition",
    "Threshold",
    "parse_threshold",
]

METRICS = ("temperature", "memory", "throttle", "power")
ACTIONS = ("warn", "pause", "stop", "throttle")
#: the metrics ``action: throttle`` can hold at a target
THROTTLE_METRICS = ("temperature", "power")
_DEFAULT_GAP = 5.0  # °C or % between the raise and the clear level when none is given
_RELATIVE = re.compile(r"^\s*slowdown\s*(?:([+-])\s*(\d+(?:\.\d+)?))?\s*$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class Threshold:
    """An alarm level, absolute or relative to the device's slowdown threshold.

    ``value`` °C/% when absolute, or ``offset`` from the device's slowdown threshold when
    ``relative`` (``slowdown-5`` is ``relative=True, offset=-5``).
    """

    value: float = 0.0
    relative: bool = False

    def resolve(self, sample: GpuSample) -> float | None:
        """Return the level (°C or %) for this device, or None.

        None when it needs a slowdown threshold the device does not report.
        """
        if not self.relative:
            return self.value
        if sample.temperature_slowdown is None:
            return None
        return sample.temperature_slowdown + self.value

    def shifted(self, delta: float) -> Threshold:
        """The same threshold moved by ``delta`` (in the metric's unit)."""
        return dataclasses.replace(self, value=self.value + delta)

    def __str__(self) -> str:
        if not self.relative:
            return f"{self.value:g}"
        if self.value == 0:
            return "slowdown"
        return f"slowdown{self.value:+g}"


def parse_threshold(text: str | float | int) -> Threshold:
    """``85`` / ``"85"`` -> 85 °C; ``"slowdown-5"`` -> 5 °C under the device's slowdown threshold.

    Raises ``ValueError`` with a one-line message for anything else.
    """
    if isinstance(text, bool):
        raise ValueError(f"bad threshold {text!r}: use a number like 85 or 'slowdown-5'")
    if isinstance(text, int | float):
        return Threshold(float(text))
    match = _RELATIVE.match(text)
    if match:
        sign, amount = match.groups()
        offset = 0.0 if amount is None else float(amount) * (-1 if sign == "-" else 1)
        return Threshold(offset, relative=True)
    try:
        return Threshold(float(text))
    except ValueError:
        raise ValueError(f"bad threshold {text!r}: use a number like 85 or 'slowdown-5'") from None


@dataclasses.dataclass(frozen=True)
class AlarmRule:
    """One alarm rule.

    ``name`` identifies it in events and pause reasons (``alarm:<name>``); it defaults to e.g.
    ``temperature>=slowdown-5``. ``threshold`` is None for ``throttle``.
    """

    metric: str
    threshold: Threshold | None = None
    clear_below: Threshold | None = None
    consecutive: int = 3
    action: str = "warn"
    name: str = ""
    reasons: tuple[str, ...] = THERMAL_REASONS + POWER_REASONS  # for metric "throttle"
    power_limit: bool = False  # action throttle on power: cap the board limit (root only)

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(f"unknown alarm metric {self.metric!r}: use {', '.join(METRICS)}")
        if self.action not in ACTIONS:
            raise ValueError(f"unknown alarm action {self.action!r}: use {', '.join(ACTIONS)}")
        if self.consecutive < 1:
            raise ValueError(f"consecutive must be at least 1, got {self.consecutive}")
        if self.metric != "throttle" and self.threshold is None:
            raise ValueError(f"a {self.metric} alarm needs a threshold")
        if (
            self.metric in ("memory", "power")
            and self.threshold is not None
            and (self.threshold.relative)
        ):
            unit = "percentage" if self.metric == "memory" else "number of watts"
            raise ValueError(f"a {self.metric} threshold is a {unit}, not relative to slowdown")
        if self.action == "throttle" and self.metric not in THROTTLE_METRICS:
            raise ValueError(
                f"action throttle holds {' or '.join(THROTTLE_METRICS)}, not {self.metric}"
            )
        if self.power_limit and (self.metric, self.action) != ("power", "throttle"):
            raise ValueError("power_limit applies to {metric: power, action: throttle} only")
        if self.threshold is not None and self.clear_below is None:
            object.__setattr__(self, "clear_below", self.threshold.shifted(-_DEFAULT_GAP))
        if not self.name:
            level = "" if self.threshold is None else f">={self.threshold}"
            object.__setattr__(self, "name", f"{self.metric}{level}")

    @classmethod
    def from_config(cls, data: Mapping[str, Any]) -> AlarmRule:
        """Build a rule from one entry of ``gpu_watch.alarms``.

        Keys: metric, threshold, clear_below, consecutive, action, name. Raises ``ValueError`` (one
        line).
        """
        known = {
            "metric",
            "threshold",
            "clear_below",
            "consecutive",
            "action",
            "name",
            "power_limit",
        }
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown alarm key {unknown[0]!r}: use {', '.join(sorted(known))}")
        metric = str(data.get("metric", "temperature"))
        raw = data.get("threshold")
        if raw is None and metric == "temperature":
            raw = "slowdown-5"
        threshold = None if raw is None or metric == "throttle" else parse_threshold(raw)
        clear_raw = data.get("clear_below")
        clear = None if clear_raw is None else parse_threshold(clear_raw)
        return cls(
            metric=metric,
            threshold=threshold,
            clear_below=clear,
            consecutive=int(data.get("consecutive", 3)),
            action=str(data.get("action", "warn")),
            name=str(data.get("name") or ""),
            power_limit=bool(data.get("power_limit") or False),
        )

    def value(self, sample: GpuSample) -> float | None:
        """The reading this rule looks at: °C, W, % used, or 1.0/0.0 for throttle."""
        if sample.lost or sample.mig_index is not None:
            return None
        if self.metric == "temperature":
            return sample.temperature
        if self.metric == "power":
            return sample.power_draw
        if self.metric == "memory":
            return sample.memory_percent
        return 1.0 if set(sample.clock_reasons) & set(self.reasons) else 0.0

    def levels(self, sample: GpuSample) -> tuple[float, float] | None:
        """``(raise at or above, clear below)`` for this device, or None if unknown."""
        if self.threshold is None:
            return (1.0, 0.5)
        high = self.threshold.resolve(sample)
        low = self.clear_below.resolve(sample) if self.clear_below is not None else high
        if high is None or low is None:
            return None
        return high, min(low, high)


@dataclasses.dataclass(frozen=True)
class AlarmTransition:
    """An alarm was raised (``raised=True``) or cleared on ``device`` at ``time``."""

    rule: AlarmRule
    device: int
    raised: bool
    value: float
    threshold: float
    time: float
    message: str


@dataclasses.dataclass
class _State:
    active: bool = False
    streak: int = 0  # consecutive samples pointing at the other state


class AlarmPolicy:
    """Debounced, hysteretic alarm state for a set of rules over every device seen.

    ``devices``: only these GPU indices are watched (None: all).
    """

    def __init__(self, rules: Iterable[AlarmRule], devices: Iterable[int] | None = None) -> None:
        self.rules = tuple(rules)
        names = [r.name for r in self.rules]
        if len(set(names)) != len(names):
            raise ValueError("two alarm rules have the same name; give one a 'name'")
        self.devices = None if devices is None else frozenset(devices)
        self._state: dict[tuple[str, int], _State] = {}

    @classmethod
    def from_config(cls, section: Mapping[str, Any] | None) -> AlarmPolicy:
        """Build from a ``gpu_watch:`` config section.

        No ``alarms`` key means the default rule (temperature at slowdown-5, warn). Raises
        ``ValueError`` (one line).
        """
        section = section or {}
        alarms = section.get("alarms")
        if alarms is None:
            alarms = [{"metric": "temperature", "threshold": "slowdown-5", "action": "warn"}]
        devices = section.get("devices")
        return cls([AlarmRule.from_config(a) for a in alarms], devices=devices)

    def active(self) -> list[tuple[AlarmRule, int]]:
        """The (rule, device) pairs whose alarm is raised now."""
        by_name = {r.name: r for r in self.rules}
        return [(by_name[n], d) for (n, d), s in self._state.items() if s.active]

    def update(self, gpus: Sequence[GpuSample], now: float) -> list[AlarmTransition]:
        """Feed one sample per device; returns the alarms raised or cleared by it."""
        transitions = []
        for sample in gpus:
            if self.devices is not None and sample.index not in self.devices:
                continue
            for rule in self.rules:
                change = self._step(rule, sample, now)
                if change is not None:
                    transitions.append(change)
        return transitions

    def _step(self, rule: AlarmRule, sample: GpuSample, now: float) -> AlarmTransition | None:
        value, levels = rule.value(sample), rule.levels(sample)
        if value is None or levels is None:
            return None  # no information: keep the state and the streak as they are
        high, low = levels
        state = self._state.setdefault((rule.name, sample.index), _State())
        wants_change = value < low if state.active else value >= high
        state.streak = state.streak + 1 if wants_change else 0
        if state.streak < rule.consecutive:
            return None
        state.active, state.streak = not state.active, 0
        level = high if state.active else low
        return AlarmTransition(
            rule=rule,
            device=sample.index,
            raised=state.active,
            value=value,
            threshold=level,
            time=now,
            message=_message(rule, sample, value, level, state.active),
        )


def _message(rule: AlarmRule, sample: GpuSample, value: float, level: float, up: bool) -> str:
    where = sample.label
    if rule.metric == "throttle":
        active = ", ".join(r for r in sample.clock_reasons if r in rule.reasons)
        return f"{where} is throttling ({active})" if up else f"{where} stopped throttling"
    unit = {"temperature": "°C", "power": " W"}.get(rule.metric, "% memory")
    if up:
        return f"{where} at {value:.0f}{unit} (alarm at {level:.0f}{unit}): {rule.action}"
    return f"{where} back to {value:.0f}{unit} (below {level:.0f}{unit})"
