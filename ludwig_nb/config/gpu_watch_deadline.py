"""``gpu_watch.deadline``: when a run must be done by, checked where it is written.

A short form (``deadline: 2h``, ``deadline: '18:30'``, ``deadline: null``) or a mapping of
``at``, ``action``, ``reserve`` and ``session_limit``; rendered as the mapping (or None).
The times are checked with ``core/deadline.py``'s parser; resolving them against a clock is
the run's business (``runs/deadline_sources.py``).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from ludwig_nb.config.schema.fields import Ctx, Spec
from ludwig_nb.config.yaml_positions import KeyPath
from ludwig_nb.core.deadline import DEADLINE_ACTIONS, parse_deadline, parse_duration

__all__ = ["DEADLINE_SOURCES", "DEFAULT_DEADLINE", "DeadlineField"]

#: ``deadline: auto``: Colab's session limit in Colab, else $LUDWIG_NB_DEADLINE, else none
DEFAULT_DEADLINE: dict[str, Any] = {
    "at": "auto",
    "action": "checkpoint",
    "reserve": 300.0,
    "session_limit": 43200.0,
}
#: what ``deadline.at`` may say besides a time: look the deadline up where it can be read
DEADLINE_SOURCES = ("auto", "colab")


class DeadlineField(Spec):
    """``deadline``: a time (short form), null, or ``{at, action, reserve, session_limit}``."""

    _KEYS = tuple(DEFAULT_DEADLINE)

    def default(self) -> object:
        """``deadline: auto`` with the default action, reserve and session limit."""
        return dict(DEFAULT_DEADLINE)

    def describe(self) -> str:
        """What may be written, for the error messages."""
        return "a time like '2h' or '18:30', 'auto', 'colab', null, or a mapping of " + (
            ", ".join(self._KEYS)
        )

    def check(self, value: object, path: KeyPath, ctx: Ctx) -> object:
        """The rendered mapping (or None); problems go to ``ctx`` at their key."""
        if value is None or value is False:
            return None
        if isinstance(value, str):
            return {**DEFAULT_DEADLINE, "at": self._at(value, path, ctx)}
        if isinstance(value, int | float) and not isinstance(value, bool):
            ctx.problem(
                path,
                "a bare number is not a deadline (YAML reads an unquoted 18:30 as one)",
                hint="quote a clock time, deadline: '18:30', or write a duration like 2h",
            )
            return dict(DEFAULT_DEADLINE)
        if not isinstance(value, Mapping):
            ctx.problem(path, f"must be {self.describe()}", hint="e.g. deadline: 2h")
            return dict(DEFAULT_DEADLINE)
        out = dict(DEFAULT_DEADLINE)
        for key, item in value.items():
            where = (*path, key)
            if key not in self._KEYS:
                close = difflib.get_close_matches(str(key), self._KEYS, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"use {', '.join(self._KEYS)}"
                ctx.problem(where, f"unknown key {key!r}", hint=hint, key=True)
            elif key == "at":
                out["at"] = self._at(item, where, ctx)
            elif key == "action":
                if item not in DEADLINE_ACTIONS:
                    ctx.problem(where, f"must be one of {', '.join(DEADLINE_ACTIONS)}")
                else:
                    out["action"] = item
            else:
                out[str(key)] = self._seconds(item, where, ctx)
        return out

    @staticmethod
    def _at(value: object, path: KeyPath, ctx: Ctx) -> str:
        if isinstance(value, int | float) and not isinstance(value, bool):
            ctx.problem(path, "a bare number is not a deadline", hint="e.g. at: '18:30' or at: 2h")
            return "auto"
        if isinstance(value, str) and value.strip().lower() in DEADLINE_SOURCES:
            return value.strip().lower()
        try:
            return parse_deadline(value).text  # type: ignore[arg-type]
        except ValueError as exc:
            ctx.problem(path, str(exc), hint="e.g. deadline: 2h, or deadline: '18:30'")
            return "auto"

    @staticmethod
    def _seconds(value: object, path: KeyPath, ctx: Ctx) -> float:
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return float(value)
        seconds = parse_duration(value) if isinstance(value, str) else None
        if seconds is None:
            ctx.problem(path, "must be a duration like 5m or a number of seconds")
            return 0.0
        return seconds
