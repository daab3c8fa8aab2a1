"""A run's state in words, for every view: why it is paused, how long it took (pure).

``pause_text`` turns ``paused (alarm:temperature>=slowdown-5)`` into "paused: GPU 0 at
88 °C, 5 °C under its slowdown point; resumes below 82 °C", or, where the GPU reports its
thermal margin, "paused: GPU 0 at 88 °C, 2 °C to slowdown; resumes below 82 °C".
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ludwig_nb.core import events as ev
from ludwig_nb.core.formatting import format_duration
from ludwig_nb.core.state import RunState
from ludwig_nb.core.thermal import describe_margin

__all__ = ["ACTION_WORDS", "CLEAR_MARGIN", "alarm_line", "alarm_text", "pause_text", "took_text"]

#: default hysteresis of an alarm (°C or %): it clears this far under its threshold
CLEAR_MARGIN = 5.0
_SLOWDOWN = re.compile(r"^temperature>=slowdown-(\d+(?:\.\d+)?)$")
_MARGIN_RULE = re.compile(r"^margin<=?(-?\d+(?:\.\d+)?)$")
_CLEAR_MARGIN = re.compile(r"^margin>=?(-?\d+(?:\.\d+)?)$")
#: the words for each of ``events.PAUSE_SOURCES``
_SOURCES = {
    "user": "paused by you",
    "control_file": "paused from the sidebar",
    "sidebar": "paused from the sidebar",
}


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def alarm_text(alarm: Mapping[str, object], clear_below: float | None = None) -> str:
    """``"GPU 0 at 88 °C, 5 °C under its slowdown point; resumes below 82 °C"``.

    ``clear_below`` (°C or %): the level the alarm clears at; default its threshold minus
    :data:`CLEAR_MARGIN`.
    """
    rule = str(alarm.get("rule", ""))
    device = alarm.get("device", "?")
    value, threshold = _number(alarm.get("value")), _number(alarm.get("threshold"))
    headroom = _number(alarm.get("margin"))
    margin_rule = _MARGIN_RULE.match(rule)
    if margin_rule and value is not None:
        where = f", {describe_margin(headroom)}" if headroom is not None else ""
        written = _CLEAR_MARGIN.match(str(alarm.get("clear") or ""))
        back = float(written.group(1)) if written else float(margin_rule.group(1)) + CLEAR_MARGIN
        return f"GPU {device} at {value:.0f} °C{where}; resumes above {back:g} °C of margin"
    if rule.startswith("temperature") and value is not None and threshold is not None:
        clear = clear_below if clear_below is not None else threshold - CLEAR_MARGIN
        margin = _SLOWDOWN.match(rule)
        if headroom is not None:  # the GPU's own margin, to its nearest slowdown point
            where = describe_margin(headroom)
        elif margin:  # the threshold is the slowdown point minus the margin
            under = threshold + float(margin.group(1)) - value
            where = (
                f"{under:.0f} °C under its slowdown point"
                if under > 0
                else f"{-under:.0f} °C past its slowdown point"
            )
        else:
            where = f"alarm at {threshold:.0f} °C"
        return f"GPU {device} at {value:.0f} °C, {where}; resumes below {clear:.0f} °C"
    if rule.startswith("memory") and value is not None and threshold is not None:
        clear = clear_below if clear_below is not None else threshold - CLEAR_MARGIN
        return (
            f"GPU {device} memory {value:.0f} % full (alarm at {threshold:.0f} %); "
            f"resumes below {clear:.0f} %"
        )
    message = str(alarm.get("message") or "")
    return message or f"{rule} on GPU {device}"


#: what an alarm does, in words
ACTION_WORDS = {
    "warn": "warning only",
    "pause": "training paused",
    "stop": "training stopped",
    "throttle": "training slowed",
}


def _alarm_words(alarm: Mapping[str, object]) -> str:
    """An alarm's own message without its action suffix (``"…: warn"``)."""
    message = str(alarm.get("message") or "")
    if message.endswith(tuple(f": {action}" for action in ACTION_WORDS)):
        message = message.rsplit(": ", 1)[0]
    if message:
        return message
    value, threshold = _number(alarm.get("value")), _number(alarm.get("threshold"))
    where = f"{alarm.get('rule', 'alarm')} on GPU {alarm.get('device', '?')}"
    if value is None or threshold is None:
        return where
    return f"{where}: {value:.4g} (threshold {threshold:.4g})"


def alarm_line(alarm: Mapping[str, object]) -> str:
    """One active alarm and what it does, in words.

    Args:
        alarm: An entry of ``RunState.alarms``.

    Returns:
        ``"GPU 0 at 86°C (alarm at 82°C) · warning only"``; a pausing alarm in
        :func:`alarm_text`'s words.
    """
    action = str(alarm.get("action", "warn"))
    text = alarm_text(alarm) if action == "pause" else _alarm_words(alarm)
    return f"{text} · {ACTION_WORDS.get(action, action)}"


def pause_text(state: RunState, clear_levels: Mapping[str, float] | None = None) -> str:
    """Why ``state`` is paused, in words (``""`` when it is not paused).

    ``clear_levels``: ``{rule name: level}`` where an alarm's config sets ``clear_below``.
    """
    if state.status != "paused":
        return ""
    reason = state.pause_reason or "user"
    if reason.startswith(ev.ALARM_PAUSE_PREFIX):
        rule = reason.removeprefix(ev.ALARM_PAUSE_PREFIX)
        alarm = next((a for a in state.alarms if a.get("rule") == rule), None)
        if alarm is None:
            return f"paused by the alarm {rule}"
        return "paused: " + alarm_text(alarm, (clear_levels or {}).get(rule))
    return _SOURCES.get(reason, f"paused ({reason})")


def took_text(state: RunState) -> str:
    """How long an ended run took, pauses included: ``"took 2 min 5 s"``; ``""`` before its end.

    The summary, the text view and the sidebar (status.json's ``took_text``) say it so.
    """
    if state.started_at is None or state.finished_at is None:
        return ""
    return f"took {format_duration(state.finished_at - state.started_at)}"
