"""A run's events in memory, with the steps kept in columns: ``EventLog``.

A long run is almost all ``StepFinished`` events: as frozen dataclasses they cost about
250 bytes each (an object, its dict and three float objects), so a million steps held
~250 MB in the kernel. Here each step is seven machine numbers in ``array`` columns
(~58 bytes) and every other event stays an object. Reading rebuilds the events, equal to
the ones appended, in their order: ``log[i]``, ``log[a:b]``, iteration and
:meth:`EventLog.view` (a read-only ``Sequence`` of the first ``n`` events that later
appends do not change).

Append-only and single-writer: the run appends under its lock; readers may read any
index below a length they have seen, from any thread.
"""

from __future__ import annotations

import bisect
import math
import operator
from array import array
from collections.abc import Iterator, Sequence
from typing import overload

from ludwig_nb.core import events as ev

__all__ = ["EventLog", "EventView"]


class EventLog:
    """The events of one run, in order; see the module docstring."""

    def __init__(self) -> None:
        self._kinds = bytearray()  # per event: 1 = a step in the columns, 0 = an object
        self._other_at = array("q")  # index in the log of each object event
        self._others: list[ev.Event] = []
        self._time = array("d")
        self._step = array("q")
        self._epoch = array("q")
        self._start = array("d")
        self._batch = array("q")
        self._loss = array("d")  # NaN where loss is None (see _loss_known)
        self._loss_known = bytearray()
        self._lr = array("d")  # NaN where learning_rate is None (see _lr_known)
        self._lr_known = bytearray()

    def append(self, event: ev.Event) -> None:
        """Append one event (a step is stored as a row of columns, anything else as the object)."""
        row = _step_row(event) if type(event) is ev.StepFinished else None
        if row is None:
            self._other_at.append(len(self._kinds))
            self._others.append(event)
            self._kinds.append(0)
            return
        time, step, epoch, start, batch, loss, lr = row
        self._time.append(time)
        self._step.append(step)
        self._epoch.append(epoch)
        self._start.append(start)
        self._batch.append(batch)
        self._loss.append(math.nan if loss is None else loss)
        self._loss_known.append(loss is not None)
        self._lr.append(math.nan if lr is None else lr)
        self._lr_known.append(lr is not None)
        self._kinds.append(1)

    def __len__(self) -> int:
        return len(self._kinds)

    @property
    def steps(self) -> int:
        """``StepFinished`` events held."""
        return len(self._time)

    def others(self) -> list[ev.Event]:
        """Every event that is not a ``StepFinished``, in order (no step is rebuilt)."""
        return list(self._others)

    def _step_event(self, k: int) -> ev.Event:
        return self._steps(k, k + 1)[0]

    def step_columns(self) -> dict[str, list[float] | list[int] | list[float | None]]:
        """The steps as columns (no event objects).

        ``time``, ``step``, ``epoch``, ``start_time``, ``batch_size``, ``loss``, ``learning_rate``
        (None where unknown).
        """
        n = len(self._time)
        return {
            "time": self._time.tolist(),
            "step": self._step.tolist(),
            "epoch": self._epoch.tolist(),
            "start_time": self._start.tolist(),
            "batch_size": self._batch.tolist(),
            "loss": self._loss.tolist()
            if not self._loss_known.count(0)  # every step had a loss: the fast path
            else [self._loss[k] if self._loss_known[k] else None for k in range(n)],
            "learning_rate": [self._lr[k] if self._lr_known[k] else None for k in range(n)],
        }

    def slice(self, start: int, stop: int) -> list[ev.Event]:
        """Events ``start`` .. ``stop - 1`` (clamped to the log), rebuilt in order."""
        stop = min(stop, len(self._kinds))
        start = max(0, start)
        if start >= stop:
            return []
        other = bisect.bisect_left(self._other_at, start)  # object events before start
        out: list[ev.Event] = []
        at = start
        while at < stop:
            # The steps up to the next object event come from the columns in one go.
            nxt = self._other_at[other] if other < len(self._other_at) else stop
            upto = min(nxt, stop)
            if upto > at:
                first = at - other
                out.extend(self._steps(first, first + upto - at))
                at = upto
            if at < stop:
                out.append(self._others[other])
                other += 1
                at += 1
        return out

    def _steps(self, lo: int, hi: int) -> list[ev.Event]:
        """Steps ``lo`` .. ``hi - 1`` of the columns as events.

        A frozen dataclass's __init__ sets each field through
        object.__setattr__; filling the instance dict directly builds the same object in half the
        time.
        """
        out: list[ev.Event] = []
        lrs = (
            lr if known else None
            for lr, known in zip(self._lr[lo:hi], self._lr_known[lo:hi], strict=True)
        )
        losses = (
            loss if known else None
            for loss, known in zip(self._loss[lo:hi], self._loss_known[lo:hi], strict=True)
        )
        for time, step, epoch, start, batch, loss, lr in zip(
            self._time[lo:hi],
            self._step[lo:hi],
            self._epoch[lo:hi],
            self._start[lo:hi],
            self._batch[lo:hi],
            losses,
            lrs,
            strict=True,
        ):
            event = _new_step(ev.StepFinished)
            event.__dict__.update(
                time=time,
                step=step,
                epoch=epoch,
                start_time=start,
                batch_size=batch,
                loss=loss,
                learning_rate=lr,
            )
            out.append(event)
        return out

    def __getitem__(self, index: int) -> ev.Event:
        n = len(self._kinds)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("event index out of range")
        other = bisect.bisect_left(self._other_at, index)
        if self._kinds[index]:
            return self._step_event(index - other)
        return self._others[other]

    def __iter__(self) -> Iterator[ev.Event]:
        return iter(self.view())

    def view(self, length: int | None = None) -> EventView:
        """A read-only sequence of the first ``length`` events (all so far by default)."""
        n = len(self._kinds) if length is None else min(length, len(self._kinds))
        return EventView(self, n)


_new_step = object.__new__

_Row = tuple[float, int, int, float, int, float | None, float | None]


def _step_row(event: ev.StepFinished) -> _Row | None:
    """Return the step's values as column types, or None.

    None when one does not fit a column: the event is then kept as an object, unchanged.
    """
    if event.tokens is not None or event.padded_tokens is not None:
        return None  # an LLM step keeps its token counts: held as the object
    try:
        lr, loss = event.learning_rate, event.loss
        return (
            float(event.time),
            operator.index(event.step),
            operator.index(event.epoch),
            float(event.start_time),
            operator.index(event.batch_size),
            None if loss is None else float(loss),
            None if lr is None else float(lr),
        )
    except (TypeError, ValueError, OverflowError):
        return None


class EventView(Sequence[ev.Event]):
    """The first ``len(view)`` events of an :class:`EventLog`; appends don't change it.

    Iterating rebuilds steps in pages, so a million-step view never exists as objects.

    Args:
        log: The log viewed.
        length: How many of its first events the view holds.
    """

    _PAGE = 4096

    def __init__(self, log: EventLog, length: int) -> None:
        self._log = log
        self._len = length

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> ev.Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[ev.Event]: ...

    def __getitem__(self, index: int | slice) -> ev.Event | list[ev.Event]:
        if isinstance(index, slice):
            start, stop, stride = index.indices(self._len)
            if stride == 1:
                return self._log.slice(start, stop)
            return [self[i] for i in range(start, stop, stride)]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError("event index out of range")
        return self._log[index]

    def __iter__(self) -> Iterator[ev.Event]:
        for start in range(0, self._len, self._PAGE):
            yield from self._log.slice(start, min(start + self._PAGE, self._len))

    def __repr__(self) -> str:
        return f"<{self._len} events>"
