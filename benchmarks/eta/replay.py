"""Replay a trace through our estimator and the peers; score remaining-time errors.

The truth at a query time ``now`` is ``end - now`` where ``end`` is the run's last event,
less the user pauses still to come (nobody can foresee those; every estimator is scored
against the same truth).
Queries are made right after the step that reaches a given fraction of the run's (final)
total steps. Scores per trace:

* ``ape``: absolute percentage error of the remaining time at 10/25/50/75 % progress;
* ``post``: the same at 5/10/15/20 % of the run after each regime change (up to 95 %);
  ``post_at`` splits ours by that offset;
* ``cover``: whether the truth fell inside our 80 % interval at 10, 15, ..., 90 %;
* ``settled`` (ours only, informational): like ``post`` but counted from the step where a
  change is complete (a throttling ramp's end) instead of its first step.

The post-change goal ("at most 3 % error once 5 % of the run has passed after a regime
change") is scored by ``post``, counted from the change's *first* step (for throttling,
the start of the ramp; the ramp lasts 4 % of a 2000-step run, so at +5 % only 1 % of the
run has been at the new level). ``settled`` only shows how much of the error at +5 % is
the ramp.

A tool that shows no number at a query point scores 100 % there.
"""

from __future__ import annotations

import dataclasses
import math

from benchmarks.eta.peers import PEERS, Peer
from benchmarks.eta.scenarios import Trace
from ludwig_nb.core import events as ev
from ludwig_nb.core.eta import EtaTracker

__all__ = ["OURS", "PROGRESS", "Scores", "final_total", "replay"]

OURS = "ludwig_nb"
PROGRESS = (0.10, 0.25, 0.50, 0.75)
COVER = tuple(round(0.10 + 0.05 * i, 2) for i in range(17))
AFTER_CHANGE = (0.05, 0.10, 0.15, 0.20)


@dataclasses.dataclass
class Scores:
    """Per estimator name: lists of absolute percentage errors (fractions)."""

    ape: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    post: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    cover: list[bool] = dataclasses.field(default_factory=list)
    post_at: dict[float, list[float]] = dataclasses.field(default_factory=dict)
    settled: list[float] = dataclasses.field(default_factory=list)

    def extend(self, other: Scores) -> None:
        for mine, theirs in ((self.ape, other.ape), (self.post, other.post)):
            for name, values in theirs.items():
                mine.setdefault(name, []).extend(values)
        for offset, values in other.post_at.items():
            self.post_at.setdefault(offset, []).extend(values)
        self.cover.extend(other.cover)
        self.settled.extend(other.settled)


def final_total(trace: Trace) -> int:
    total = 0
    for event in trace.events:
        if isinstance(event, ev.RunStarted | ev.ScheduleChanged):
            total = event.schedule.total_steps
    return total


def _query_steps(trace: Trace, total: int) -> tuple[dict[int, set[str]], dict[int, float]]:
    """Steps done (count) at which to query -> which scores they feed; and for the
    post-change queries, their offset (fraction of the run after the change)."""
    at: dict[int, set[str]] = {}
    offsets: dict[int, float] = {}
    for f in PROGRESS:
        at.setdefault(max(1, math.ceil(f * total)), set()).add("ape")
    for f in COVER:
        at.setdefault(max(1, math.ceil(f * total)), set()).add("cover")
    for key, starts in (("post", trace.changes), ("settled", trace.settled)):
        for change in starts:
            for f in AFTER_CHANGE:
                n = change + math.ceil(f * total)
                if n <= 0.95 * total:
                    at.setdefault(n, set()).add(key)
                    if key == "post":
                        offsets[n] = f
    return at, offsets


def _ape(value: float | None, truth: float) -> float:
    if value is None or truth <= 0:
        return 1.0
    return abs(value - truth) / truth


def replay(trace: Trace) -> Scores:
    """Replay ``trace`` through ``EtaTracker`` and every peer; return its scores."""
    total = final_total(trace)
    end = trace.events[-1].time
    queries, offsets = _query_steps(trace, total)
    pauses = [
        (e.paused_at, e.time - e.paused_at) for e in trace.events if isinstance(e, ev.Resumed)
    ]
    ours = EtaTracker()
    peers: list[Peer] = [cls() for cls in PEERS]
    scores = Scores()
    for event in trace.events:
        ours.observe(event)
        for peer in peers:
            peer.observe(event)
        if not isinstance(event, ev.StepFinished) or event.step + 1 not in queries:
            continue
        now = event.time
        truth = end - now - sum(d for t, d in pauses if t >= now)
        kinds = queries[event.step + 1]
        mine = ours.estimate(now)
        values = {OURS: None if mine is None else mine.remaining_s}
        values.update({p.name: p.remaining(now) for p in peers})
        for key in ("ape", "post"):
            if key in kinds:
                bucket = getattr(scores, key)
                for name, value in values.items():
                    bucket.setdefault(name, []).append(_ape(value, truth))
        if "post" in kinds:
            scores.post_at.setdefault(offsets[event.step + 1], []).append(_ape(values[OURS], truth))
        if "settled" in kinds:
            scores.settled.append(_ape(values[OURS], truth))
        if "cover" in kinds:
            scores.cover.append(mine is not None and mine.low_s <= truth <= mine.high_s)
    return scores
