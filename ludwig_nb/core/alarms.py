"""GPU alarm policy: rules, debounce and hysteresis as a pure function of the samples.

A rule watches one metric on every GPU: ``temperature`` (°C, absolute, relative to the
device's own slowdown threshold, e.g. ``slowdown-5``, or in thermal-margin units, e.g.
``margin<5``: less than 5 °C of headroom left), ``power`` (W drawn), ``memory``
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
from ludwig_nb.core.thermal import describe_margin

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
_MARGIN = re.compile(r"^\s*margin\s*(<=?|>=?)\s*(-?\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
_HINT = "use a number like 85, 'slowdown-5' or 'margin<5'"


@dataclasses.dataclass(frozen=True)
class Threshold:
    """An alarm level: absolute, relative to the device's slowdown threshold, or a margin.

    ``value`` °C/% when absolute; the ``offset`` from the device's slowdown threshold when
    ``relative`` (``slowdown-5`` is ``relative=True, value=-5``); °C of thermal margin when
    ``margin`` (``margin<5`` is ``margin=True, value=5, strict=True``). A margin level
    resolves per sample to the temperature at which that much margin is left, so every rule
    compares temperatures. ``strict``: the comparison excludes the level itself (an alarm
    raises at ``>=`` and clears at ``<`` unless written otherwise).
    """

    value: float = 0.0
    relative: bool = False
    margin: bool = False
    strict: bool = False
    clear: bool = False

    def resolve(self, sample: GpuSample) -> float | None:
        """Return the level (°C or %) for this device, or None.

        None when it needs a slowdown threshold, or a margin and a temperature, that the
        device does not report.
        """
        if self.margin:
            if sample.temperature is None or sample.temperature_margin is None:
                return None
            return sample.temperature + sample.temperature_margin - self.value
        if not self.relative:
            return self.value
        if sample.temperature_slowdown is None:
            return None
        return sample.temperature_slowdown + self.value

    def shifted(self, delta: float) -> Threshold:
        """The same threshold moved by ``delta`` °C/% (hotter: up), as a clear level.

        A margin moves the other way (a hotter level leaves less margin).
        """
        value = self.value - delta if self.margin else self.value + delta
        return dataclasses.replace(self, value=value, strict=True, clear=True)

    def __str__(self) -> str:
        if self.margin:
            op = {(False, True): "<", (False, False): "<=", (True, True): ">", (True, False): ">="}
            return f"margin{op[(self.clear, self.strict)]}{self.value:g}"
        if not self.relative:
            return f"{self.value:g}"
        if self.value == 0:
            return "slowdown"
        return f"slowdown{self.value:+g}"


def parse_threshold(text: str | float | int, clear: bool = False) -> Threshold:
    """Parse an alarm level (``clear``: a ``clear_below`` level).

    ``85`` / ``"85"`` -> 85 °C; ``"slowdown-5"`` -> 5 °C under the device's slowdown threshold;
    ``"margin<5"`` (or ``<=``) -> less than 5 °C of thermal margin left. As a clear level a
    margin reads ``"margin>10"`` (or ``>=``): the alarm clears once 10 °C of margin are back.
    Raises ``ValueError`` with a one-line message for anything else.
    """
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise ValueError(f"bad threshold {text!r}: {_HINT}")
    if isinstance(text, int | float):
        return Threshold(float(text), strict=clear, clear=clear)
    margin = _MARGIN.match(text)
    if margin:
        return _margin_threshold(text, margin.group(1), float(margin.group(2)), clear)
    match = _RELATIVE.match(text)
    if match:
        sign, amount = match.groups()
        offset = 0.0 if amount is None else float(amount) * (-1 if sign == "-" else 1)
        return Threshold(offset, relative=True, strict=clear, clear=clear)
    try:
        return Threshold(float(text), strict=clear, clear=clear)
    except ValueError:
        raise ValueError(f"bad threshold {text!r}: {_HINT}") from None


def _margin_threshold(text: str, op: str, value: float, clear: bool) -> Threshold:
    if clear and op.startswith("<"):
        raise ValueError(
            f"bad clear level {text!r}: an alarm clears when the margin grows, e.g. 'margin>10'"
        )
    if not clear and op.startswith(">"):
        raise ValueError(
            f"bad threshold {text!r}: an alarm fires on little margin, e.g. 'margin<5'"
        )
    return Threshold(value, margin=True, strict=len(op) == 1, clear=clear)


@dataclasses.dataclass(frozen=True)
class AlarmRule:
    """One alarm rule.

    ``name`` identifies it in events and pause reasons (``alarm:<name>``); it defaults to e.g.
    ``temperature>=slowdown-5`` (``margin<5`` for a margin rule). ``threshold`` is None for
    ``throttle``. A parsed ``threshold`` raises at ``>=`` (``<`` for a margin); a
    ``clear_below`` written by hand clears at ``<`` (``>`` for a margin).
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
        self._check_units()
        if self.action == "throttle" and self.metric not in THROTTLE_METRICS:
            raise ValueError(
                f"action throttle holds {' or '.join(THROTTLE_METRICS)}, not {self.metric}"
            )
        if self.power_limit and (self.metric, self.action) != ("power", "throttle"):
            raise ValueError("power_limit applies to {metric: power, action: throttle} only")
        if self.threshold is not None and self.clear_below is None:
            object.__setattr__(self, "clear_below", self.threshold.shifted(-_DEFAULT_GAP))
        if not self.name:
            object.__setattr__(self, "name", self._default_name())

    def _check_units(self) -> None:
        threshold, clear = self.threshold, self.clear_below
        if self.metric in ("memory", "power") and threshold is not None:
            unit = "percentage" if self.metric == "memory" else "number of watts"
            if threshold.relative or threshold.margin:
                kind = "a thermal margin" if threshold.margin else "relative to slowdown"
                raise ValueError(f"a {self.metric} threshold is a {unit}, not {kind}")
        if threshold is None or clear is None:
            return
        if threshold.margin != clear.margin:
            raise ValueError(
                "the threshold and clear_below must both be margins (e.g. 'margin<5' and "
                "'margin>10') or both temperatures"
            )
        if threshold.margin and clear.value < threshold.value:
            raise ValueError(
                f"clear_below {clear} leaves less margin than the threshold {threshold} "
                "(it must clear on the cool side)"
            )

    def _default_name(self) -> str:
        if self.threshold is None:
            return self.metric
        if self.threshold.margin:
            return str(self.threshold)
        return f"{self.metric}>={self.threshold}"

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
        clear = None if clear_raw is None else parse_threshold(clear_raw, clear=True)
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
        """``(raise level, clear level)`` for this device (°C, % or W), or None if unknown."""
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
    margin: float | None = None  # °C of thermal margin the GPU had (temperature rules)


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
        wants_change = _clears(rule, value, low) if state.active else _raises(rule, value, high)
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
            margin=sample.temperature_margin if rule.metric == "temperature" else None,
        )


def _raises(rule: AlarmRule, value: float, high: float) -> bool:
    strict = rule.threshold is not None and rule.threshold.strict
    return value > high if strict else value >= high


def _clears(rule: AlarmRule, value: float, low: float) -> bool:
    clear = rule.clear_below
    # a temperature clears strictly under its level; only a margin may say "margin>=N"
    inclusive = clear is not None and clear.margin and not clear.strict
    return value <= low if inclusive else value < low


def _message(rule: AlarmRule, sample: GpuSample, value: float, level: float, up: bool) -> str:
    where = sample.label
    if rule.metric == "throttle":
        active = ", ".join(r for r in sample.clock_reasons if r in rule.reasons)
        return f"{where} is throttling ({active})" if up else f"{where} stopped throttling"
    unit = {"temperature": "°C", "power": " W"}.get(rule.metric, "% memory")
    margin = sample.temperature_margin if rule.metric == "temperature" else None
    headroom = "" if margin is None else f", {describe_margin(margin)}"
    if rule.threshold is not None and rule.threshold.margin:
        limit = "alarm under" if up else "clears above"
        assert rule.clear_below is not None
        amount = rule.threshold.value if up else rule.clear_below.value
        detail = f"{limit} {amount:g} °C of margin"
    else:
        detail = f"alarm at {level:.0f}{unit}" if up else f"below {level:.0f}{unit}"
    if up:
        return f"{where} at {value:.0f}{unit}{headroom} ({detail}): {rule.action}"
    return f"{where} back to {value:.0f}{unit}{headroom} ({detail})"
