"""The terminal view of a run: a tqdm bar on a terminal, else a plain line every few seconds.

The third view beside the dashboard (ui/dashboard.py) and the text view (ui/text_view.py),
on the same :class:`~ludwig_nb.ui.run_view.RunView` base: it reads the run's one state and
ETA through its handle and words nothing the run layer words (pauses, the early-stop
forecast). ``ludwig-nb train`` follows a run with it and prints :func:`final_report` at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from ludwig_nb.runs.handle import RunHandle
from ludwig_nb.ui.run_view import RunView

if TYPE_CHECKING:
    from tqdm import tqdm

    from ludwig_nb.core.state import RunState

__all__ = [
    "FollowedRun",
    "Follower",
    "eta_words",
    "final_json",
    "final_report",
    "progress_line",
]


class FollowedRun(RunHandle, Protocol):
    """A run the terminal follows: its handle, and waiting for its end."""

    @property
    def is_done(self) -> bool:
        """Whether the run has ended."""
        ...

    def wait(self, timeout: float | None = None) -> FollowedRun:
        """Block until the run ends (or ``timeout`` seconds); returns the run."""
        ...


def final_report(state: RunState, directory: str) -> str:
    """Format the end-of-run report.

    ``completed: 2,585/2,585 steps -> DIR``, why it ended, then the best metrics beside the trivial
    baseline as a table, the end-of-run warnings and how the batch size was chosen.
    """
    from ludwig_nb.core.baseline import baseline_warnings
    from ludwig_nb.core.early_stop import end_reason
    from ludwig_nb.core.metrics_text import metrics_text_table

    lines = [f"{state.status}: {state.step:,}/{state.total_steps:,} steps -> {directory}"]
    ended = end_reason(state)
    if ended:
        lines.append(ended)
    metrics = state.best_metrics or state.latest_metrics
    table = metrics_text_table(metrics, state.baseline, state.baseline_predictors)
    if table:
        if state.best_metrics:
            at = f", step {state.best_step:,}" if state.best_step else ""
            lines.append(f"metrics (best{at}):")
        else:
            lines.append("metrics (latest evaluation):")
        lines.append(table)
    lines.extend(baseline_warnings(metrics, state.baseline, state.baseline_predictors))
    lines.extend(f"warning: {warning}" for warning in state.warnings)
    if state.batch_note:
        lines.append(state.batch_note)
    return "\n".join(lines)


def final_json(state: RunState) -> dict[str, object]:
    """``ludwig-nb train --json``: the status, the metrics and what to be wary of.

    ``{"status", "metrics": {split: {feature: {metric: value}}}, "baseline": [{"split",
    "feature", "metric", "value", "baseline", "predictor", "verdict"}], "warnings": [the
    lines :func:`final_report` prints with ⚠, then the run's own end-of-run warnings],
    "batch_size", "batch_note"}``; the metrics are the best evaluation's (the latest's when
    none was best).
    """
    import dataclasses

    from ludwig_nb.core.baseline import baseline_warnings, compare_to_baseline

    metrics = state.best_metrics or state.latest_metrics
    versus = compare_to_baseline(metrics, state.baseline, state.baseline_predictors)
    return {
        "status": state.status,
        "metrics": dict(metrics),
        "baseline": [{**dataclasses.asdict(c), "verdict": c.verdict} for c in versus],
        "warnings": [
            *baseline_warnings(metrics, state.baseline, state.baseline_predictors),
            *state.warnings,
        ],
        "batch_size": state.batch_size,
        "batch_note": state.batch_note,
    }


def eta_words(run: RunHandle, state: RunState, now: float) -> str:
    """The ETA part of a progress line, from the run's one ETA, worded as every view words it.

    ``"ETA ≈ 4 min (…) · done ≈ 14:05"``; with early stopping the ETA is an upper bound and
    the likely stop is forecast (:func:`~ludwig_nb.ui.eta_text.reading_words`); then the
    deadline against this very estimate.
    """
    from ludwig_nb.ui.eta_text import reading_words

    reading = run.eta_reading(now)
    deadline = reading.deadline
    after = ""
    if deadline and deadline.get("text") and deadline.get("verdict") != "passed":
        after = f" · ⏰ {deadline['text']}"  # the deadline against this very estimate
    return f"ETA {reading_words(reading, state, now)}{after}"


def progress_line(state: RunState, eta_words: str, pause_words: str = "") -> str:
    """One progress line.

    ``"training · step 1,200 / 3,000 (40 %) · epoch 2 / 5 · loss 0.2312 · ETA …"``; paused: the
    reason in words and the frozen estimate.
    """
    if state.status == "preprocessing" or (state.status == "queued" and not state.step):
        return f"{state.status} · {state.phase_detail or 'loading and preprocessing the data'}"
    if state.is_final:
        from ludwig_nb.core.early_stop import end_reason

        ended = end_reason(state) or state.error
        return " · ".join(p for p in (state.status, f"step {state.step:,}", ended) if p)
    total = f"{state.total_steps:,}" if state.total_steps else "?"
    pct = f" ({100 * state.progress:.0f} %)" if state.total_steps else ""
    parts = [pause_words or state.status, f"step {state.step:,} / {total}{pct}"]
    if state.epochs:
        parts.append(f"epoch {min(state.epoch + 1, state.epochs)} / {state.epochs}")
    if state.last_loss is not None:
        parts.append(f"loss {state.last_loss:.4g}")
    parts.append(f"estimate frozen: {eta_words}" if pause_words else eta_words)
    if state.gpu_slowdown:
        parts.append(f"⚠ {state.gpu_slowdown}")
    return " · ".join(parts)


class Follower(RunView):
    """Progress on ``stream``.

    A tqdm bar on a terminal; without one (a log file, CI) a plain line every ``interval`` seconds,
    never carriage-return frames. Ctrl-C stops the run gracefully; a second one gives up. ``clock``
    (monotonic seconds) spaces the lines, ``wall`` (wall-clock seconds) feeds the ETA.
    """

    def __init__(
        self,
        run: FollowedRun,
        stream: TextIO,
        interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(run)
        self._run = run
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.interval = interval
        self.clock = clock
        self.wall = wall
        self._frozen = ""  # the ETA words when the pause began
        self._last_line: float | None = None
        self.lines = 0

    def line(self) -> str:
        """The current progress line, from the run's one state and ETA."""
        from ludwig_nb.core.status_text import pause_text

        self._skip()  # the terminal draws no curve: it only catches up with the run's state
        state = self.state
        if state.status == "paused":
            if not self._frozen:
                self._frozen = eta_words(self.run, state, self.wall())
            return progress_line(state, self._frozen, pause_text(state))
        self._frozen = ""
        return progress_line(state, eta_words(self.run, state, self.wall()))

    def follow(self) -> None:
        """Show progress until the run ends; Ctrl-C stops it, a second Ctrl-C gives up."""
        bar = self._bar() if self.tty else None
        interrupted = False
        while True:
            try:
                done = self._run.wait(0.25).is_done
                self.show(bar, done)
                if done:
                    break
            except KeyboardInterrupt:
                if interrupted:
                    raise
                interrupted = True
                self.run.stop("keyboard interrupt")
        if bar is not None:
            bar.close()
        self._close()

    def _bar(self) -> tqdm[Any]:
        from tqdm import tqdm

        return tqdm(
            total=0,
            unit="step",
            dynamic_ncols=True,
            file=self.stream,
            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} {postfix}",
        )

    def show(self, bar: tqdm[Any] | None, done: bool) -> None:
        """Update the bar, or print a line when ``interval`` passed (or the run ended)."""
        if bar is not None:
            line = self.line()  # first: it moves the state on
            bar.total = max(self.state.total_steps, self.state.step)
            bar.n = self.state.step
            bar.set_postfix_str(line)
            return
        now = self.clock()
        if done or self._last_line is None or now - self._last_line >= self.interval:
            self._last_line = now
            print(self.line(), file=self.stream, flush=True)
            self.lines += 1
