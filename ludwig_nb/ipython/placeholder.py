"""The first frame of a ``%%ludwig_config`` cell: one line saying what the cell is doing.

It is shown before anything heavy is imported and replaced by the dashboard once it is built.
A cell sent the instant ``%load_ext`` returns (Run All) used to show nothing for 3-5 s:
the config layer, pandas, the dataset and the widget libraries load first (the warm-up
thread is importing them, and the cell waits for each one), and only then is the
dashboard displayed. This line needs only ``IPython.display``, which is already loaded,
so it is in the output area within milliseconds and says what is being waited for
("checking the dataset demo:churn"); the dashboard takes its place (the dataset is read
afterwards, on the run's thread, with the dashboard up). Shown only in a kernel
with a front end (a terminal IPython would print the object's repr).
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from typing import Any

__all__ = ["EMPTY", "Placeholder"]

#: what a cleared placeholder holds (renders as nothing, in HTML and as text)
EMPTY = {"text/html": "", "text/plain": ""}

_STYLE = "font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px; opacity: 0.8"


class Placeholder:
    """A one-line HTML output with a display id, updated in place and cleared at the end.

    ``display`` is IPython's ``display`` (a parameter so that tests see the messages);
    ``clock`` gives seconds (the elapsed time shown after the first second).
    """

    def __init__(
        self,
        name: str,
        display: Callable[..., Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self._display = display
        self._clock = clock
        self._began = clock()
        self._handle: Any = None
        self.cleared = False

    @classmethod
    def for_shell(cls, shell: Any, name: str) -> Placeholder:
        """Make one that shows itself only where a front end renders HTML.

        That is an ipykernel shell, not a terminal. Raises nothing.

        Args:
            shell: The IPython shell running the cell.
            name: The run's name, shown on the line.

        Returns:
            The placeholder (not shown yet: :meth:`say` shows it).
        """
        display = None
        if getattr(shell, "kernel", None) is not None:
            from IPython.display import display as ipython_display

            display = ipython_display
        return cls(name, display)

    @staticmethod
    def html(name: str, doing: str, elapsed_s: float | None = None) -> str:
        """The line: the run's name and what the cell is doing (escaped)."""
        took = f" · {elapsed_s:.0f} s" if elapsed_s is not None and elapsed_s >= 1 else ""
        return (
            f'<div class="ludwig-nb-placeholder" style="{_STYLE}">⏳ <b>{html.escape(name)}</b>'
            f" · {html.escape(doing)}{took}</div>"
        )

    def say(self, doing: str) -> None:
        """Show (first call) or replace the line with ``doing``."""
        if self._display is None or self.cleared:
            return
        elapsed = self._clock() - self._began
        bundle = {
            "text/html": self.html(self.name, doing, elapsed),
            "text/plain": f"{self.name}: {doing}",
        }
        if self._handle is None:
            self._handle = self._display(bundle, raw=True, display_id=True)
        else:
            self._handle.update(bundle, raw=True)

    def clear(self) -> None:
        """Empty the line; the dashboard, or the error, is shown in its place.

        A saved notebook keeps an empty output. Idempotent.
        """
        if self.cleared:
            return
        self.cleared = True
        if self._handle is not None:
            self._handle.update(EMPTY, raw=True)
