"""What ``status.json`` says in words beside ``RunState``, so every reader shows the same.

The dashboard, the text view and the terminal word a run's pause, its ETA and its early stop
with :func:`ludwig_nb.core.status_text.pause_text`,
:func:`ludwig_nb.core.eta.display.format_estimate`, :func:`ludwig_nb.core.early_stop.end_reason`
and :func:`ludwig_nb.core.early_stop.format_forecast`; the run writes the same words into
``status.json`` (:func:`status_words`) so that the sidebar, the notebook snapshot and any
other reader of the run directory need no wording of their own. Pure: the forecast is a
parameter.
"""

from __future__ import annotations

from typing import Any

from ludwig_nb.core.early_stop import StopForecast, end_reason, format_forecast
from ludwig_nb.core.state import RunState
from ludwig_nb.core.status_text import alarm_line, pause_text, took_text

__all__ = ["early_stop_block", "status_words"]


def early_stop_block(
    state: RunState, patience: int, metric: str, forecast: StopForecast | None
) -> dict[str, object] | None:
    """``status.json``'s ``"early_stop"``.

    Args:
        state: The run's state.
        patience: Evaluations without improvement that end the run; ``<= 0``: off.
        metric: The validation metric early stopping watches.
        forecast: The likely stop (``core/early_stop.forecast_stop``), None before one.

    Returns:
        None when early stopping is off, else ``{"patience", "metric", "upper_bound",
        "likely_step", "earliest_step", "likely_remaining_s", "text"}`` (steps are counts of
        steps done; seconds). A run that has ended keeps its patience and metric, and
        ``text`` says why it ended (``""`` when it ran its planned total).
    """
    if patience <= 0:
        return None
    total = state.total_steps
    final = state.is_final
    live = forecast if not final else None
    text = format_forecast(live, total) if total else ""
    if final:
        text = end_reason(state, patience)
    return {
        "patience": patience,
        "metric": metric,
        "upper_bound": (total or None) if not final else None,
        "likely_step": live.step if live is not None else None,
        "earliest_step": live.earliest if live is not None else None,
        "likely_remaining_s": live.remaining_s if live is not None else None,
        "text": text,
    }


def _alarm_texts(state: RunState) -> list[str]:
    """The active alarms in words, less the one ``pause_text`` already names."""
    if state.is_final:
        return []
    pausing = state.pause_reason.removeprefix("alarm:") if state.status == "paused" else None
    return [alarm_line(a) for a in state.alarms if a.get("rule") != pausing]


def status_words(
    state: RunState,
    early_stop: dict[str, Any] | None,
    throttle_text: str = "",
    deadline: dict[str, Any] | None = None,
    eta_text: str = "",
) -> dict[str, object]:
    """The worded fields of ``status.json``.

    Args:
        state: The run's state.
        early_stop: :func:`early_stop_block`'s block (its patience words the early stop).
        throttle_text: The time its GPU lost to throttling so far
            (``core/throttle_time.describe_throttle_time``), ``""`` without figures.
        deadline: The deadline block: ``{"at", "label", "action", "verdict", "text"}``
            (``core/deadline.outlook``), None without a deadline.
        eta_text: The ETA as every view words it after "ETA"
            (``core/eta/display.format_estimate``, ``bound`` under early stopping).

    Returns:
        ``pause_text`` (why it is paused, ``""`` when it is not), ``alarm_texts`` (each
        active alarm and what it does, as the dashboard's banner says it, less the alarm
        the pause text names; none once the run has ended), ``end_reason`` (why it ended,
        ``""`` when it ran its total or is live), ``early_stop``, ``throttle_text`` and
        ``deadline`` (none once the run has ended), ``eta_text`` (``""`` once ended) and
        ``took_text`` (how long it took, ``core/status_text.took_text``; ``""`` while live).
    """
    patience = early_stop.get("patience") if early_stop else None
    return {
        "pause_text": pause_text(state),
        "alarm_texts": _alarm_texts(state),
        "end_reason": end_reason(state, patience) if state.is_final else "",
        "early_stop": early_stop,
        "throttle_text": throttle_text,
        "deadline": None if state.is_final else deadline,
        "eta_text": "" if state.is_final else eta_text,
        "took_text": took_text(state),
    }
