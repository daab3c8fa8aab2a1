"""The levels an alarm can sensibly fire at, and what an alarm outside them would do.

A temperature alarm at -5 °C fires on every sample (with ``action: stop``, every run stops at
once); one at 1e6 °C never fires. Neither is what anyone means, so a level outside what a GPU
can read is refused where it is written (the config's ``gpu_watch.alarms``, ``%gpu_watch
--alarm``) with what it would do. The ranges are wide on purpose: they catch a slip of a sign
or of units, not a choice.

Thermal-margin levels (``margin<N``) are checked where they are parsed.
"""

from __future__ import annotations

import math

from ludwig_nb.core.alarms import Threshold

__all__ = ["POWER_W", "SLOWDOWN_OFFSET_C", "TEMPERATURE_C", "level_problem"]

#: °C a GPU's temperature reads between: ~20 °C is a cold room's air, and GPUs shut themselves
#: down between about 90 and 105 °C
TEMPERATURE_C = (20.0, 120.0)
#: °C around the GPU's slowdown temperature: 60 below it is under any working GPU's, and the
#: shutdown temperature is within about 15 above it
SLOWDOWN_OFFSET_C = (-60.0, 15.0)
#: W a GPU board can draw (the largest draw about 1,200 W)
POWER_W = (0.0, 2000.0)


def level_problem(metric: str, level: Threshold, *, clear: bool = False) -> str | None:
    """What is wrong with ``level`` for an alarm on ``metric``, or None when it can fire.

    Args:
        metric: ``temperature``, ``power``, ``memory`` or ``throttle``.
        level: the parsed threshold (or clear level).
        clear: ``level`` is where the alarm clears (the words then say "clear").

    Returns:
        One sentence for the user ("... would fire on every sample"), or None.
    """
    value = level.value
    if getattr(level, "margin", False):
        return None  # thermal-margin levels are checked where they are parsed
    if not math.isfinite(value):
        return f"{value} is not a level an alarm can reach: use a number of {_unit(metric)}"
    if metric == "temperature" and level.relative:
        return _offset_problem(value, clear)
    if metric == "temperature":
        return _range_problem(value, TEMPERATURE_C, "°C", clear, "a GPU's temperature")
    if metric == "power":
        return _range_problem(value, POWER_W, "W", clear, "a GPU board's power draw")
    return None


def _unit(metric: str) -> str:
    return {"temperature": "°C", "power": "W", "memory": "% of memory used"}.get(metric, "")


def _range_problem(
    value: float, bounds: tuple[float, float], unit: str, clear: bool, what: str
) -> str | None:
    low, high = bounds
    if value < low:
        effect = "never clear" if clear else "fire on every sample"
        return f"{value:g} {unit} is below {what} ({low:g} {unit} and up): the alarm would {effect}"
    if value > high:
        effect = "clear at once" if clear else "never fire"
        return f"{value:g} {unit} is above {what} (up to {high:g} {unit}): the alarm would {effect}"
    return None


def _offset_problem(offset: float, clear: bool) -> str | None:
    low, high = SLOWDOWN_OFFSET_C
    text = f"slowdown{offset:+g}"
    if offset < low:
        effect = "never clear" if clear else "fire on every sample"
        return (
            f"{text} is {-offset:g} °C under the GPU's slowdown temperature, below where a "
            f"working GPU runs (at most {-low:g} under it): the alarm would {effect}"
        )
    if offset > high:
        effect = "clear at once" if clear else "never fire"
        return (
            f"{text} is above the GPU's shutdown temperature (within {high:g} °C of slowdown): "
            f"the alarm would {effect}"
        )
    return None
