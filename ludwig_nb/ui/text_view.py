"""The dashboard without a widget front end: the same state as text/HTML via a display handle.

For plain IPython, a terminal, or a front end without the widget manager. A
:class:`TextView` is a ``ui.pump.View``: each frame it drains the run's events and, when
the rendering changed and ``min_interval`` seconds passed (or the run ended), updates
its display handle with a ``text/plain`` + ``text/html`` bundle. The renderers are pure.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Mapping

from ludwig_nb.core.state import RunState
from ludwig_nb.core.status_text import alarm_line
from ludwig_nb.runs.handle import RunHandle
from ludwig_nb.ui.charts.curves import CurveData
from ludwig_nb.ui.eta_text import EtaText
from ludwig_nb.ui.formatting import (
    STATUS_COLORS,
    alarm_banner_html,
    deadline_html,
    error_html,
    eta_line,
    format_tokens_per_s,
    header_html,
    pace_html,
    progress_text,
    slowdown_html,
    state_text,
)
from ludwig_nb.ui.llm_view import llm_panel_html
from ludwig_nb.ui.run_view import RunView
from ludwig_nb.ui.summary import summary_html, summary_text
from ludwig_nb.ui.throughput import ThroughputMeter

__all__ = ["TextView", "render_html", "render_text"]


def render_text(
    state: RunState,
    eta: str,
    samples_per_s: float | None,
    tokens_per_s: tuple[float, float] | None = None,
    deadline: Mapping[str, object] | None = None,
) -> str:
    """One line: ``"name [training] step 12 / 100 · epoch 1 / 2 · ETA … · 512 samples/s"``.

    An LLM run's rate leads with its tokens/s (``tokens_per_s``: real and padded).
    ``deadline``: the deadline against the ETA (``EtaReading.deadline``), said after it.
    """
    text = f"{state.name or state.run_id} [{state_text(state)}] {progress_text(state)}"
    if not state.is_final:
        text += f" · {eta_line(state, eta)}"
        if state.status != "paused":
            text += f" · {format_tokens_per_s(tokens_per_s, samples_per_s)}"
        if deadline and deadline.get("text") and deadline.get("verdict") != "passed":
            text += f" · ⏰ {deadline['text']}"
        if state.gpu_slowdown:
            text += f" · ⚠ {state.gpu_slowdown}"
    if state.last_loss is not None:
        text += f" · loss {state.last_loss:.4g}"
    if state.status == "failed":
        text += f" · {state.error}"
    for alarm in state.alarms:  # in the dashboard banner's words, never the rule
        text += f" · ⚠ {alarm_line(alarm)}"
    return text


def render_html(
    state: RunState,
    eta: str,
    samples_per_s: float | None,
    tokens_per_s: tuple[float, float] | None = None,
    deadline: Mapping[str, object] | None = None,
) -> str:
    """The live state as HTML with an HTML ``<progress>`` bar (no widgets needed)."""
    color = STATUS_COLORS.get(state.status, "#757575")
    body = (
        f'<div class="ludwig-nb-live" style="border:1px solid {color};padding:4px 8px">'
        f"<div>{header_html(state)}</div>"
        f'<progress value="{state.progress:.4f}" max="1" style="width:60%"></progress> '
        f"{html.escape(progress_text(state))}"
    )
    if not state.is_final:
        rate = (
            ""
            if state.status == "paused"
            else f" · {format_tokens_per_s(tokens_per_s, samples_per_s)}"
        )
        body += f"<div>{html.escape(eta_line(state, eta) + rate)}</div>"
    body += alarm_banner_html(state.alarms) + slowdown_html(state) + pace_html(state)
    if not state.is_final:
        body += deadline_html(deadline)
    body += llm_panel_html(state)
    if state.status == "failed":
        body += error_html(state.error or state.reason, "")
    return body + "</div>"


class TextView(RunView):
    """Pump view that renders a run through ``update(bundle)`` (an IPython display handle).

    It reads the run's one state and ETA (:class:`~ludwig_nb.runs.handle.RunHandle`) and
    folds events only into what it alone draws (the curves of the summary, throughput).

    ``update`` takes a mimebundle dict (``final`` takes the last one, default ``update``);
    ``min_interval`` is in seconds of the pump's
    monotonic ``now``; ``clock`` is wall-clock seconds for the ETA.
    """

    def __init__(
        self,
        run: RunHandle,
        update: Callable[[dict[str, str]], None],
        clock: Callable[[], float] = time.time,
        min_interval: float = 1.0,
        final: Callable[[dict[str, str]], None] | None = None,
    ) -> None:
        super().__init__(run)
        self._update = update
        self._final = final or update
        self._clock = clock
        self.min_interval = min_interval
        self.curves = CurveData()
        self.eta = EtaText(run, min_interval)
        self.throughput = ThroughputMeter()
        self._last_text = ""
        self._last_time: float | None = None
        self.updates = 0

    def refresh(self, now: float) -> None:
        """Reduce the new events; show the new text once ``min_interval`` s passed.

        ``now`` is the pump's monotonic time (s). Freezes once the run has ended.
        """
        if self._closed.is_set():
            return
        for event in self._drain():
            self.curves.observe(event)
            self.throughput.observe(event)
        final = self.state.is_final
        self.eta.refresh(self.state, self._clock(), now, force=final)
        if final:
            self._finish()
            return
        rates = self.throughput.samples_per_s, self.throughput.tokens_per_s
        deadline = self.eta.deadline
        text = render_text(self.state, self.eta.text, *rates, deadline)
        due = self._last_time is None or now - self._last_time >= self.min_interval
        if text != self._last_text and due:
            self._last_text, self._last_time = text, now
            self._update(
                {
                    "text/plain": text,
                    "text/html": render_html(self.state, self.eta.text, *rates, deadline),
                }
            )
            self.updates += 1

    def _finish(self) -> None:
        self._final(
            {
                "text/plain": summary_text(self.state),
                "text/html": summary_html(
                    self.state,
                    self.curves,
                    first_finish=self.eta.first_finish,
                    traceback_text=self.run.traceback_text,
                    directory=str(self.run.directory),
                    resources=self.run.profile_summary,
                ),
            }
        )
        self.updates += 1
        self._close()
