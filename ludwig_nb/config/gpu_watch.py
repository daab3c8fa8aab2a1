"""The ``gpu_watch:`` section (ours, not Ludwig's): GPU monitoring and temperature alarms.

Shape and defaults are in docs/CONTRACTS.md. ``check_gpu_watch`` validates and renders the
section; ``GpuWatchConfig.from_dict`` gives its typed view (``Config.gpu_watch``). The run
layer reads the rendered dict (runs/monitoring.py).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Mapping
from typing import Any, Literal

from ludwig_nb.config.gpu_watch_deadline import DEFAULT_DEADLINE, DeadlineField
from ludwig_nb.config.schema.fields import Ctx, ListOf, Param, Section, Spec
from ludwig_nb.config.yaml_positions import KeyPath
from ludwig_nb.core.alarms import ACTIONS, METRICS, THROTTLE_METRICS, parse_threshold

__all__ = [
    "ALARM_ACTIONS",
    "ALARM_METRICS",
    "DEFAULT_ALARM",
    "DEFAULT_DEADLINE",
    "AlarmRuleConfig",
    "DeadlineConfig",
    "GpuWatchConfig",
    "check_gpu_watch",
]

# one definition of the alarm vocabulary: the policy's own (core/alarms.py)
ALARM_METRICS = METRICS
ALARM_ACTIONS = ACTIONS
#: the one alarm a config gets when it names none
DEFAULT_ALARM: dict[str, Any] = {
    "metric": "temperature",
    "threshold": "slowdown-5",
    "clear_below": None,
    "name": None,
    "consecutive": 3,
    "action": "warn",
    "power_limit": False,
}
_DEFAULT_THRESHOLD = {"temperature": "slowdown-5", "memory": 90.0, "throttle": None, "power": None}
_SLOWDOWN_RE = re.compile(r"^slowdown(?:\s*([+-])\s*(\d+(?:\.\d+)?))?$")
_MARGIN_RE = re.compile(r"^margin\s*(<=?|>=?)\s*-?\d+(?:\.\d+)?$")


@dataclasses.dataclass(frozen=True)
class AlarmRuleConfig:
    """One alarm rule.

    ``threshold``: °C (temperature), W (power), % used (memory), a string ``"slowdown"``,
    ``"slowdown-N"``, ``"slowdown+N"`` relative to the GPU's slowdown temperature, or
    ``"margin<N"`` (less than N °C of thermal margin left); None for ``throttle``.
    ``clear_below``: None means threshold - 5 (``"margin>N+5"`` for a margin).
    ``action: throttle`` holds a temperature or power at the threshold by spacing steps;
    ``power_limit`` (power + throttle only) caps the board's power limit instead (root).
    """

    metric: Literal["temperature", "memory", "throttle", "power"]
    threshold: float | str | None
    clear_below: float | str | None
    consecutive: int
    action: Literal["warn", "pause", "stop", "throttle"]
    name: str | None = None
    power_limit: bool = False


@dataclasses.dataclass(frozen=True)
class DeadlineConfig:
    """When a run must be done by, and what happens when it will not be.

    ``at``: ``"auto"`` (Colab's session limit in Colab, else ``$LUDWIG_NB_DEADLINE``), ``"colab"``,
    or a time (``"2h"`` from the run's start, ``"18:30"``, ``"2026-08-12T18:30"``); ``action``:
    warn, checkpoint or stop; ``reserve``: seconds kept free before it; ``session_limit``: the
    longest a Colab runtime lives (seconds).
    """

    at: str = "auto"
    action: Literal["warn", "checkpoint", "stop"] = "checkpoint"
    reserve: float = 300.0
    session_limit: float = 43200.0


@dataclasses.dataclass(frozen=True)
class GpuWatchConfig:
    """Typed ``gpu_watch`` section.

    ``enabled``: "auto" (on when a GPU is present) or a bool; ``interval`` and ``history`` in
    seconds; ``devices``: GPU indices or None for all.
    """

    enabled: bool | Literal["auto"] = "auto"
    simulate: bool | str | Mapping[str, float | str] = False
    interval: float = 1.0
    devices: tuple[int, ...] | None = None
    history: float = 600.0
    alarms: tuple[AlarmRuleConfig, ...] = (AlarmRuleConfig(**DEFAULT_ALARM),)
    #: Ludwig's ``gpu_memory_limit``: a fraction of each GPU in (0, 1], or MiB when above 1
    gpu_memory_limit: float | None = None
    #: out-of-memory recovery (split batches, same effective batch): auto = on for
    #: ``batch_size: auto``
    oom_recovery: bool | Literal["auto"] = "auto"
    #: None: no deadline at all (``deadline: null``)
    deadline: DeadlineConfig | None = DeadlineConfig()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GpuWatchConfig:
        """From a rendered (already validated) section."""
        devices = data.get("devices")
        deadline = data.get("deadline", DEFAULT_DEADLINE)
        return cls(
            enabled=data.get("enabled", "auto"),
            simulate=data.get("simulate", False),
            interval=float(data.get("interval", 1.0)),
            devices=tuple(devices) if devices is not None else None,
            history=float(data.get("history", 600.0)),
            alarms=tuple(AlarmRuleConfig(**a) for a in data.get("alarms", [DEFAULT_ALARM])),
            gpu_memory_limit=data.get("gpu_memory_limit"),
            oom_recovery=data.get("oom_recovery", "auto"),
            deadline=None if deadline is None else DeadlineConfig(**deadline),
        )

    def to_dict(self) -> dict[str, object]:
        """The section as plain JSON-able values (tuples as lists, alarms as dicts)."""
        out = dataclasses.asdict(self)
        out["devices"] = list(self.devices) if self.devices is not None else None
        out["alarms"] = [dataclasses.asdict(a) for a in self.alarms]
        out["deadline"] = None if self.deadline is None else dataclasses.asdict(self.deadline)
        return out


class _Threshold(Spec):
    """A number, ``slowdown±N`` or ``margin<N`` (``margin>N`` as a clear level).

    The metric-specific checks come after.
    """

    def __init__(self, clear: bool = False) -> None:
        self.clear = clear

    def default(self) -> object:
        return None

    def describe(self) -> str:
        margin = "'margin>N'" if self.clear else "'margin<N'"
        return f"a number, 'slowdown', 'slowdown-N', 'slowdown+N', {margin} or null"

    def check(self, value: object, path: KeyPath, ctx: Ctx) -> object:
        if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
            return float(value) if value is not None else None
        if isinstance(value, str) and _SLOWDOWN_RE.match(value.strip()):
            return value.strip().replace(" ", "")
        if isinstance(value, str) and _MARGIN_RE.match(value.strip()):
            try:
                parse_threshold(value, clear=self.clear)
            except ValueError as exc:
                ctx.problem(path, str(exc).split(": ", 1)[-1], hint=self._hint())
                return value
            return value.strip().replace(" ", "")
        ctx.problem(path, f"must be {self.describe()}", hint=self._hint())
        return value

    def _hint(self) -> str:
        return "e.g. 78 or 'margin>10'" if self.clear else "e.g. 83, 'slowdown-5' or 'margin<5'"


#: ``ThermalProfile`` fields a ``simulate:`` mapping may set (°C, seconds, W)
SIMULATE_FIELDS = (
    "ambient",
    "hot",
    "heat_tau",
    "cool_tau",
    "slowdown",
    "shutdown",
    "max_operating",
    "idle_power",
    "power_limit",
    "generation",
)
#: ``simulate: {generation: ...}``: what the simulated card reports (gpu/simulated.py)
SIMULATE_GENERATIONS = ("hopper", "ampere", "legacy")


class _Simulate(Spec):
    """Parse ``gpu_watch.simulate``.

    ``false``, ``true`` (a realistic card), ``demo`` (fast time constants) or a mapping of
    thermal-profile fields (numbers; ``generation``: hopper, ampere or legacy).
    """

    def default(self) -> object:
        return False

    def describe(self) -> str:
        return "true, false, 'demo' or a mapping of " + ", ".join(SIMULATE_FIELDS)

    def check(self, value: object, path: KeyPath, ctx: Ctx) -> object:
        if isinstance(value, bool) or value == "demo":
            return value
        if isinstance(value, Mapping):
            out: dict[str, float | str] = {}
            for key, item in value.items():
                if key == "generation":
                    if item in SIMULATE_GENERATIONS:
                        out["generation"] = str(item)
                    else:
                        ctx.problem((*path, key), f"must be {', '.join(SIMULATE_GENERATIONS)}")
                elif key not in SIMULATE_FIELDS:
                    close = difflib.get_close_matches(str(key), SIMULATE_FIELDS, n=1)
                    hint = f"did you mean {close[0]!r}?" if close else None
                    ctx.problem((*path, key), f"unknown key {key!r}", hint=hint)
                elif isinstance(item, bool) or not isinstance(item, int | float) or item < 0:
                    ctx.problem((*path, key), "must be a non-negative number")
                else:
                    out[str(key)] = float(item)
            return out
        ctx.problem(path, f"must be {self.describe()}", hint="e.g. simulate: demo")
        return False


_ALARM = Section(
    {
        "metric": Param("temperature", choices=ALARM_METRICS),
        "threshold": _Threshold(),
        "clear_below": _Threshold(clear=True),
        "name": Param(None, "str", "null"),
        "consecutive": Param(3, "int", ge=1),
        "action": Param("warn", choices=ALARM_ACTIONS),
        "power_limit": Param(False, "bool"),
    }
)

_SECTION = Section(
    {
        "enabled": Param("auto", "bool", literals=("auto",)),
        "simulate": _Simulate(),
        "interval": Param(1.0, "float", ge=0.25),
        "devices": ListOf(Param(0, "int", ge=0), None),
        "history": Param(600, "float", gt=0.0),
        "alarms": ListOf(_ALARM, [DEFAULT_ALARM], nullable=False),
        "gpu_memory_limit": Param(None, "float", "null", gt=0.0),
        "oom_recovery": Param("auto", "bool", literals=("auto",)),
        "deadline": DeadlineField(),
    }
)


def check_gpu_watch(raw: object, path: KeyPath, ctx: Ctx) -> dict[str, object]:
    """Validate and render ``gpu_watch`` (None -> every default)."""
    rendered: dict[str, object] = _SECTION.check(raw, path, ctx)
    alarms = rendered.get("alarms")
    if isinstance(alarms, list):
        for i, alarm in enumerate(alarms):
            if isinstance(alarm, dict):
                _check_alarm(alarm, (*path, "alarms", i), ctx)
    return rendered


def _check_throttle(alarm: dict[str, object], path: KeyPath, ctx: Ctx) -> None:
    metric, action = alarm.get("metric"), alarm.get("action")
    if action == "throttle" and metric not in THROTTLE_METRICS:
        ctx.problem(
            (*path, "action"),
            f"action throttle holds a temperature or a power, not {metric}",
            hint="use warn, pause or stop here",
        )
    if alarm.get("power_limit") and (metric, action) != ("power", "throttle"):
        ctx.problem(
            (*path, "power_limit"),
            "power_limit needs metric: power, action: throttle",
            hint="e.g. {metric: power, threshold: 250, action: throttle, power_limit: true}",
        )


def _check_alarm(alarm: dict[str, Any], path: KeyPath, ctx: Ctx) -> None:
    metric, threshold = alarm.get("metric"), alarm.get("threshold")
    if metric not in ALARM_METRICS:
        return
    _check_throttle(alarm, path, ctx)
    if threshold is None and metric == "power":
        ctx.problem(
            (*path, "threshold"),
            "a power alarm needs a threshold in watts",
            hint="e.g. threshold: 250",
        )
    elif threshold is None:
        alarm["threshold"] = _DEFAULT_THRESHOLD[metric]
    elif metric == "power" and (isinstance(threshold, str) or threshold <= 0):
        ctx.problem(
            (*path, "threshold"),
            "a power threshold is a positive number of watts",
            hint="e.g. threshold: 250",
        )
    elif metric == "throttle":
        ctx.problem(
            (*path, "threshold"),
            "a throttle alarm has no threshold",
            hint="remove 'threshold' (it fires on any thermal/power throttle reason)",
        )
    elif metric == "memory" and isinstance(threshold, str):
        ctx.problem(
            (*path, "threshold"),
            "a memory threshold is a percentage of memory used",
            hint="e.g. threshold: 90",
        )
    elif metric == "memory" and isinstance(threshold, float) and not 0 < threshold <= 100:
        ctx.problem((*path, "threshold"), f"must be a percentage in (0, 100], got {threshold:g}")
    clear = alarm.get("clear_below")
    if isinstance(clear, int | float) and not isinstance(clear, bool):
        alarm["clear_below"] = float(clear)
        if isinstance(alarm["threshold"], float) and clear > alarm["threshold"]:
            ctx.problem((*path, "clear_below"), "must not be above the threshold (hysteresis)")
    _check_margins(alarm, path, ctx)


def _is_margin(value: object) -> bool:
    return isinstance(value, str) and value.startswith("margin")


def _check_margins(alarm: dict[str, Any], path: KeyPath, ctx: Ctx) -> None:
    """A margin threshold clears on a margin, on the cool side of it (and the other way round)."""
    threshold, clear = alarm.get("threshold"), alarm.get("clear_below")
    if clear is None or threshold is None or alarm.get("metric") != "temperature":
        return
    if _is_margin(threshold) != _is_margin(clear):
        ctx.problem(
            (*path, "clear_below"),
            "the threshold and clear_below must both be margins or both temperatures",
            hint="e.g. threshold: 'margin<5' with clear_below: 'margin>10'",
        )
        return
    if _is_margin(threshold):
        try:
            low = parse_threshold(threshold)
            high = parse_threshold(clear, clear=True)
        except ValueError:
            return  # reported where it was written
        if high.value < low.value:
            ctx.problem(
                (*path, "clear_below"),
                f"clears at less margin ({clear}) than it fires ({threshold})",
                hint=f"e.g. clear_below: 'margin>{low.value + 5:g}'",
            )
