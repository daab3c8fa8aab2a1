# IPython's magic decorators and display() carry no type hints.
# mypy: disable-error-code="untyped-decorator,no-untyped-call"
"""The ``%gpu_watch`` view: per-GPU gauge cards, a timeline per GPU, an alarm log.

A ``ui.pump.View``: the pump calls :meth:`GpuWatchView.refresh` a few times a second; the
view reads the sampler's latest-value slot and history (never NVML) and, only when a new
snapshot arrived, writes the widgets whose content changed, each inside ``hold_sync`` (one
message per changed widget per new snapshot, never one per gauge per sample).
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import ipywidgets as widgets

from ludwig_nb.core.alarms import AlarmTransition
from ludwig_nb.core.gpu_sample import GpuSample, Snapshot
from ludwig_nb.core.throttle_time import ThrottleMeter
from ludwig_nb.ui.charts.svg_widgets import SvgTimeline
from ludwig_nb.ui.gauges import RED, clock_text, gpu_card_html, host_html, no_gpu_html

__all__ = ["GpuWatchView"]

Writes = dict[Any, dict[str, Any]]


class _SamplerLike(Protocol):
    def latest(self) -> Snapshot | None: ...

    def history_columns(
        self, metric: str, device: int | None = None, since: float | None = None
    ) -> tuple[list[float], list[float]]: ...


class _AlarmLog(Protocol):
    @property
    def log(self) -> list[AlarmTransition]: ...


class GpuWatchView:
    """Live gauges for ``sampler``'s GPUs (``devices``: only these indices; None: all).

    ``history``: seconds of timeline shown. ``alarms``: anything with a ``log`` of
    :class:`AlarmTransition` (an ``AlarmWatch``), shown newest first. ``on_close``: called
    once by :meth:`close` (the magic stops what it started there). ``timeline``: makes a
    GPU's timeline from ``(index, history)`` (default ``ui.charts.svg_widgets.SvgTimeline``:
    % and °C in two panels, an SVG that renders in JupyterLab and Colab alike).

    Args:
        sampler: Its snapshots are shown.
        title: The view's heading.
    """

    def __init__(
        self,
        sampler: _SamplerLike,
        *,
        devices: Iterable[int] | None = None,
        history: float = 600.0,
        alarms: _AlarmLog | None = None,
        title: str = "GPU watch",
        on_close: Callable[[], None] | None = None,
        timeline: Callable[[int, float], object] | None = None,
    ) -> None:
        self.sampler = sampler
        self._timeline = timeline or SvgTimeline
        self.devices = None if devices is None else frozenset(devices)
        self.history = float(history)
        self.alarms = alarms
        self._on_close = on_close
        self._closed = threading.Event()
        self._last_time: float | None = None
        self._last_log: tuple[int, float] = (0, 0.0)
        self.frames = 0
        self.header = widgets.HTML(f"<b>{html.escape(title)}</b>: waiting for the first sample")
        self.host = widgets.HTML("")
        self.alarm_log = widgets.HTML("")
        self.gpu_box = widgets.VBox([])
        self._cards: dict[tuple[int, int | None], widgets.HTML] = {}
        self._timelines: dict[int, Any] = {}
        self._meters: dict[int, ThrottleMeter] = {}  # each GPU's throttled time, last minute
        self._title = title
        self.widget = widgets.VBox([self.header, self.gpu_box, self.host, self.alarm_log])
        self._shown_in: int | None = None

    # -- View protocol ---------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """Whether the view was closed and needs no more frames."""
        return self._closed.is_set()

    def close(self) -> None:
        """Stop refreshing (the pump drops the view) and run ``on_close`` once."""
        if self._closed.is_set():
            return
        self._closed.set()
        if self._on_close is not None:
            self._on_close()

    def refresh(self, now: float) -> None:  # noqa: ARG002 (the pump's view protocol)
        """Write what changed since the last frame (``now``: monotonic s, unused)."""
        snapshot = self.sampler.latest()
        writes: Writes = {}
        if snapshot is not None and snapshot.time != self._last_time:
            self._last_time = snapshot.time
            writes.update(self._snapshot_writes(snapshot))
        writes.update(self._alarm_writes())
        _apply(writes)
        self.frames += 1

    # -- what to write -----------------------------------------------------------------
    def _snapshot_writes(self, snapshot: Snapshot) -> Writes:
        gpus = [g for g in snapshot.gpus if self.devices is None or g.index in self.devices]
        writes: Writes = {}
        if not gpus:
            reason = snapshot.reason or "no GPU among the selected devices"
            writes[self.header] = {"value": f"<b>{html.escape(self._title)}</b>"}
            writes[self.host] = {"value": no_gpu_html(reason, snapshot.host)}
            return writes
        self._ensure_widgets(gpus)
        names = ", ".join(sorted({g.name or "GPU" for g in gpus if g.mig_index is None}))
        header = (
            f"<b>{html.escape(self._title)}</b>: {html.escape(names)} · {clock_text(snapshot.time)}"
        )
        writes[self.header] = {"value": header}
        writes[self.host] = {"value": host_html(snapshot.host)}
        for gpu in gpus:
            throttled = None
            if gpu.mig_index is None and not gpu.lost:
                meter = self._meters.setdefault(gpu.index, ThrottleMeter())
                meter.add(gpu, snapshot.time)
                throttled = meter.recent()
            card = gpu_card_html(gpu, throttled=throttled)
            writes[self._cards[(gpu.index, gpu.mig_index)]] = {"value": card}
            timeline = self._timelines.get(gpu.index)
            if timeline is not None and gpu.mig_index is None and not gpu.lost:
                writes.update(timeline.writes(self.sampler, gpu, snapshot.time, self.history))
        return {w: t for w, t in writes.items() if not _same(w, t)}

    def _ensure_widgets(self, gpus: list[GpuSample]) -> None:
        keys = [(g.index, g.mig_index) for g in gpus]
        if all(k in self._cards for k in keys):
            return
        children: list[object] = []
        for gpu in gpus:
            key = (gpu.index, gpu.mig_index)
            card = self._cards.setdefault(key, widgets.HTML(""))
            row: list[object] = [card]
            if gpu.mig_index is None:
                timeline = self._timelines.setdefault(
                    gpu.index, self._timeline(gpu.index, self.history)
                )
                row.append(timeline.figure)
            box = widgets.HBox(row, layout=widgets.Layout(align_items="center"))
            card.layout.min_width = "420px"
            children.append(box)
        self.gpu_box.children = tuple(children)

    def _alarm_writes(self) -> Writes:
        if self.alarms is None:
            return {}
        log = self.alarms.log
        key = (len(log), log[-1].time if log else 0.0)
        if key == self._last_log:
            return {}
        self._last_log = key
        rows = []
        for change in reversed(log[-20:]):
            color = RED if change.raised else "#2ca02c"
            verb = change.rule.action if change.raised else "cleared"
            rows.append(
                f'<div><span style="color:{color}">{clock_text(change.time)} {verb}</span> '
                f"{html.escape(change.message)}</div>"
            )
        return {self.alarm_log: {"value": "<b>alarms</b>" + "".join(rows)}}

    # -- display -----------------------------------------------------------------------
    def mark_shown(self, execution_count: int | None) -> None:
        """Called by the magic after it displayed the widget in cell ``execution_count``.

        The displayhook showing the returned view in that same cell is then skipped.
        """
        self._shown_in = execution_count

    def _ipython_display_(self) -> None:
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        count = getattr(shell, "execution_count", None)
        if self._shown_in is not None and self._shown_in == count:
            return
        display(self.widget)

    def __repr__(self) -> str:
        state = "closed" if self.closed else "live"
        return f"<GpuWatchView {state}, {len(self._cards)} device(s), {self.history:.0f} s history>"


def _same(widget: object, traits: dict[str, object]) -> bool:
    """True for an HTML write that would not change anything (arrays are always sent)."""
    return set(traits) == {"value"} and getattr(widget, "value", None) == traits["value"]


def _apply(writes: Writes) -> None:
    for widget, traits in writes.items():
        with widget.hold_sync():
            for name, value in traits.items():
                setattr(widget, name, value)
