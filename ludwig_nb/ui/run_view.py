"""``RunView``: what every view of a run shares (dashboard, text view, terminal view).

A view reads its run through the :class:`~ludwig_nb.runs.handle.RunHandle`: it subscribes to
the run's events once, draws the state as of the last event it drained (so a frame's numbers
and its curves agree), and closes once it has drawn the run's end. :meth:`wait_closed` lets
a cell (or the CLI) wait for that last frame.
"""

from __future__ import annotations

import threading

from ludwig_nb.core import events as ev
from ludwig_nb.core.state import RunState
from ludwig_nb.runs.handle import RunHandle

__all__ = ["RunView"]


class RunView:
    """A view's subscription to its run, and whether it has closed.

    Args:
        run: The run shown.
    """

    def __init__(self, run: RunHandle) -> None:
        self.run = run
        self._subscription = run.subscribe()
        self._closed = threading.Event()  # set once the view drew its last frame

    @property
    def state(self) -> RunState:
        """The run's state as of the last event this view drew (the run's own object)."""
        return self._subscription.state

    @property
    def closed(self) -> bool:
        """Whether the view froze (its run ended) and needs no more frames."""
        return self._closed.is_set()

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` s (None: forever) for the view's last frame; True once drawn."""
        return self._closed.wait(timeout)

    def _drain(self) -> list[ev.Event]:
        """The run's events since the last drain (:attr:`state` then is as of the last)."""
        return self._subscription.drain()

    def _skip(self) -> None:
        """Catch up with the run without reading its events (a view that draws no curve)."""
        self._subscription.skip()

    def _close(self) -> None:
        """Read no more events and say the view is closed (after its last frame)."""
        self._subscription.close()
        self._closed.set()
