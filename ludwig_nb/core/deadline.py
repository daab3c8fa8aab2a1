"""Deadlines: "will it finish before my session ends?" (pure; the clock is a parameter).

A deadline is written as a duration from when it is set (``"2h"``, ``"90min"``,
``"1h30m"``), a clock time (``"18:30"``: today, or tomorrow once past), or a date and time
(``"2026-08-12T18:30"``, with an optional UTC offset). :func:`parse_deadline` checks the text
(a config or an option), :meth:`DeadlineSpec.resolve` turns it into wall-clock seconds.

:func:`outlook` compares the ETA's 80 % interval with the deadline ("likely finishes
20 min after your session ends"). :class:`DeadlinePolicy` decides when the deadline's
action fires: ``warn`` as soon as the run is unlikely to make it; ``checkpoint`` and
``stop`` at the last moment that still leaves time to save a resumable checkpoint before
the cut-off (a reserve, one step, an evaluation that may be under way, and the checkpoint
itself, taken generously).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from typing import Literal

from ludwig_nb.core.eta.plan import Estimate
from ludwig_nb.core.formatting import format_clock, format_duration

__all__ = [
    "DEADLINE_ACTIONS",
    "Deadline",
    "DeadlineDecision",
    "DeadlineOutlook",
    "DeadlinePolicy",
    "DeadlineSpec",
    "Lead",
    "outlook",
    "parse_deadline",
    "parse_duration",
]

DEADLINE_ACTIONS = ("warn", "checkpoint", "stop")
#: a checkpoint's cost before one was seen (seconds): generous, it only moves the action earlier
DEFAULT_CHECKPOINT_S = 30.0
_HINT = "use a duration like 2h or 90min, a clock time like 18:30, or 2026-08-12T18:30"
_PART = re.compile(
    r"(\d+(?:\.\d+)?)\s*(hours?|hrs|hr|h|minutes?|mins|min|m|seconds?|secs|sec|s)(?![a-z])"
)
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0}
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")

Verdict = Literal["ok", "at_risk", "late", "unknown", "passed"]


def parse_duration(text: str) -> float | None:
    """``"2h"``, ``"90 min"``, ``"1h30m"``, ``"45s"`` -> seconds; None when not a duration."""
    cleaned = text.strip().lower()
    if not cleaned:
        return None
    pos, total = 0, 0.0
    for match in _PART.finditer(cleaned):
        if cleaned[pos : match.start()].strip():
            return None
        total += float(match.group(1)) * _UNIT_S[match.group(2)[0]]
        pos = match.end()
    if pos == 0 or cleaned[pos:].strip():
        return None
    return total


@dataclasses.dataclass(frozen=True)
class DeadlineSpec:
    """A deadline as written: ``kind`` is ``"duration"``, ``"clock"`` or ``"datetime"``."""

    text: str
    kind: str
    seconds: float = 0.0  # duration
    clock: tuple[int, int, int] = (0, 0, 0)  # hour, minute, second
    when: dt.datetime | None = None  # datetime (naive: local time)

    def resolve(self, set_at: float, tz: dt.tzinfo | None = None) -> float:
        """Wall-clock seconds of the deadline, for a spec set at ``set_at`` (seconds).

        ``tz``: the zone of clock times and naive dates (None: local).
        """
        if self.kind == "duration":
            return set_at + self.seconds
        if self.kind == "datetime":
            assert self.when is not None
            when = self.when
            if when.tzinfo is None and tz is not None:
                when = when.replace(tzinfo=tz)
            return when.timestamp()  # a naive time is local time
        now = dt.datetime.fromtimestamp(set_at, tz)
        hour, minute, second = self.clock
        at = now.replace(hour=hour, minute=minute, second=second, microsecond=0)
        if at.timestamp() <= set_at:
            at += dt.timedelta(days=1)
        return at.timestamp()


def parse_deadline(text: str) -> DeadlineSpec:
    """Check a deadline's text; raises ``ValueError`` (one line, with an example)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"bad deadline {text!r}: {_HINT}")
    cleaned = text.strip()
    seconds = parse_duration(cleaned)
    if seconds is not None:
        if seconds <= 0:
            raise ValueError(f"bad deadline {text!r}: a duration must be positive")
        return DeadlineSpec(cleaned, "duration", seconds=seconds)
    clock = _CLOCK.match(cleaned)
    if clock:
        hour, minute, second = (int(g) if g else 0 for g in clock.groups())
        if hour > 23 or minute > 59 or second > 59:
            raise ValueError(f"bad deadline {text!r}: not a time of day")
        return DeadlineSpec(cleaned, "clock", clock=(hour, minute, second))
    try:
        when = dt.datetime.fromisoformat(cleaned.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"bad deadline {text!r}: {_HINT}") from None
    return DeadlineSpec(cleaned, "datetime", when=when)


@dataclasses.dataclass(frozen=True)
class Deadline:
    """When a run must be done by (wall-clock seconds) and what to do about it.

    ``label`` names it in sentences ("your deadline", "your Colab session ends");
    ``reserve_s``: seconds kept free before ``at`` (the cut-off may come early);
    ``source``: where it came from (``config``, ``kernel``, ``colab``, ``environment``).
    """

    at: float
    label: str = "your deadline"
    action: str = "checkpoint"
    reserve_s: float = 300.0
    source: str = "config"

    def __post_init__(self) -> None:
        if self.action not in DEADLINE_ACTIONS:
            raise ValueError(f"deadline action {self.action!r}: use {', '.join(DEADLINE_ACTIONS)}")

    def to_dict(self) -> dict[str, object]:
        """JSON-able form."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class DeadlineOutlook:
    """The ETA against the deadline: ``verdict`` and the sentence a user reads.

    ``slack_s``: seconds between the predicted finish and the deadline (negative: late);
    None without an estimate.
    """

    verdict: Verdict
    text: str
    slack_s: float | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON-able form."""
        return dataclasses.asdict(self)


def outlook(
    deadline: Deadline, estimate: Estimate | None, now: float, tz: dt.tzinfo | None = None
) -> DeadlineOutlook:
    """Compare the estimate's interval, read at ``now`` (s), with ``deadline``.

    ``ok`` when even the interval's late end is in time; ``late`` when even its early end is
    after the deadline; ``at_risk`` in between.
    """
    end = deadline.at
    clock = format_clock(end, now, tz)
    if now >= end:
        return DeadlineOutlook("passed", f"past {deadline.label} ({clock})")
    if estimate is None or estimate.state == "warming_up":
        left = format_duration(end - now)
        return DeadlineOutlook("unknown", f"{deadline.label} at {clock} (in {left})")
    point = now + max(0.0, estimate.remaining_s)
    slack = end - point
    if now + estimate.high_s <= end:
        text = f"finishes before {deadline.label} ({format_duration(slack)} to spare)"
        return DeadlineOutlook("ok", text, slack)
    if now + estimate.low_s > end:
        text = f"likely finishes {format_duration(-slack)} after {deadline.label} ({clock})"
        return DeadlineOutlook("late", text, slack)
    return DeadlineOutlook("at_risk", f"may not finish before {deadline.label} ({clock})", slack)


@dataclasses.dataclass(frozen=True)
class Lead:
    """What saving before the cut-off costs, in seconds.

    ``step_s``: one training step; ``checkpoint_s``: one checkpoint (None: not seen yet);
    ``evaluation_s``: one evaluation (0 when the run does not evaluate).
    """

    step_s: float = 0.0
    checkpoint_s: float | None = None
    evaluation_s: float = 0.0
    tick_s: float = 1.0  # how often the policy is asked

    def seconds(self, reserve_s: float) -> float:
        """How long before the deadline a checkpoint or stop must be asked for."""
        checkpoint = DEFAULT_CHECKPOINT_S if self.checkpoint_s is None else self.checkpoint_s
        return reserve_s + self.tick_s + self.step_s + self.evaluation_s + 2.0 * checkpoint


@dataclasses.dataclass(frozen=True)
class DeadlineDecision:
    """What the policy asks for at ``time``: ``kind`` ``warn``, ``checkpoint`` or ``stop``."""

    kind: str
    time: float
    message: str
    outlook: DeadlineOutlook


class DeadlinePolicy:
    """When a deadline's action fires; :meth:`update` at least once a second.

    Warns once when the outlook turns ``at_risk`` and again if it turns ``late``. The
    ``checkpoint`` or ``stop`` action fires once, at ``deadline - lead``, unless the run is
    predicted to finish before then.
    """

    def __init__(self, deadline: Deadline, tz: dt.tzinfo | None = None) -> None:
        self.deadline = deadline
        self._tz = tz
        self._warned: set[str] = set()
        self.acted_at: float | None = None

    def update(
        self, now: float, estimate: Estimate | None, lead: Lead, ready: bool = True
    ) -> list[DeadlineDecision]:
        """The decisions due at ``now`` (seconds), each returned once.

        ``ready``: a ``checkpoint`` can be taken (the run trains); until then it waits.
        """
        view = outlook(self.deadline, estimate, now, self._tz)
        decisions: list[DeadlineDecision] = []
        if view.verdict in ("at_risk", "late") and view.verdict not in self._warned:
            self._warned.add(view.verdict)
            decisions.append(DeadlineDecision("warn", now, self._warning(view), view))
        waits = self.deadline.action == "checkpoint" and not ready
        if self.deadline.action != "warn" and self.acted_at is None and not waits:
            cut = self.deadline.at - lead.seconds(self.deadline.reserve_s)
            done_first = estimate is not None and now + estimate.remaining_s < cut
            if now >= cut and not done_first and now < self.deadline.at:
                self.acted_at = now
                decisions.append(DeadlineDecision(self.deadline.action, now, self._act(), view))
        return decisions

    def _warning(self, view: DeadlineOutlook) -> str:
        action = {
            "warn": "",
            "checkpoint": "; a checkpoint will be saved before then",
            "stop": "; the run will stop and save a checkpoint before then",
        }[self.deadline.action]
        return f"⏰ {view.text}{action}"

    def _act(self) -> str:
        clock = format_clock(self.deadline.at, self.deadline.at, self._tz)
        if self.deadline.action == "stop":
            return f"stopping to save a checkpoint before {self.deadline.label} ({clock})"
        return f"saving a checkpoint before {self.deadline.label} ({clock})"
