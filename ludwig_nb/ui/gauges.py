"""GPU and host gauges as HTML: full cards for ``%gpu_watch``, a compact row for dashboards.

The ``*_html`` functions are pure (a sample in, a string out), so they are tested without
a front end. :class:`MiniGauges` wraps the compact row in one ``ipywidgets.HTML`` and
returns its writes (``{widget: {trait: value}}``) only when the text changed, so a
dashboard can apply them inside its own one-batch-per-frame update. HTML widgets behave
the same in ipywidgets 7 and 8.

Temperatures are drawn against the device's own thresholds: the bar's scale ends 5 °C
above the shutdown temperature, with marks at slowdown (orange) and shutdown (red); the text
gives the thermal margin ("81 °C · 6 °C to slowdown") and the thresholds sit in its tooltip.
On GPUs with GPM the utilisation row adds what the GPU really did (SM, tensor and DRAM
activity), explained in one line in its tooltip. Texts never wrap inside a gauge.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Sequence

from ludwig_nb.core.formatting import format_bytes
from ludwig_nb.core.gpu_sample import (
    POWER_REASONS,
    THERMAL_REASONS,
    GpuSample,
    HostSample,
    Snapshot,
)
from ludwig_nb.core.thermal import describe_margin
from ludwig_nb.core.throttle_time import ThrottleTime, describe_throttle_time

__all__ = [
    "ACTIVITY_TOOLTIP",
    "MiniGauges",
    "activity_html",
    "bar_html",
    "compact_gauges_html",
    "gpu_card_html",
    "host_html",
    "no_gpu_html",
    "temperature_color",
    "temperature_html",
]

GREEN, ORANGE, RED, GREY, BLUE = "#2ca02c", "#ff7f0e", "#d62728", "#9e9e9e", "#1f77b4"
_WARN_MARGIN = 5.0  # °C under slowdown where the bar turns orange
#: the utilisation gauge's tooltip: what NVML's number means and what GPM adds
ACTIVITY_TOOLTIP = (
    "Utilisation is the share of time any kernel ran, however little of the GPU it used; "
    "SM is the share of multiprocessors busy, tensor the share of time tensor cores worked, "
    "DRAM the share of peak memory bandwidth used (GPM, Hopper and newer)."
)
_BAR = (
    "display:inline-block;position:relative;vertical-align:middle;"
    "width:{w}px;height:10px;background:#e6e6e6;border-radius:2px;overflow:hidden"
)


def _fmt(value: float | None, unit: str, digits: int = 0) -> str:
    return "N/A" if value is None else f"{value:.{digits}f}{unit}"


def _clip(fraction: float) -> float:
    return min(1.0, max(0.0, fraction))


def bar_html(
    fraction: float | None,
    text: str,
    color: str = BLUE,
    width: int = 90,
    marks: Iterable[tuple[float, str]] = (),
    tooltip: str = "",
) -> str:
    """Draw a horizontal bar gauge as HTML.

    A horizontal bar filled to ``fraction`` (0..1; None: empty, "N/A"), with vertical ``marks`` at
    (fraction, colour), followed by ``text`` on one line; ``tooltip``: the whole gauge's title.
    """
    fill = (
        ""
        if fraction is None
        else (
            f'<span style="position:absolute;left:0;top:0;bottom:0;'
            f'width:{100 * _clip(fraction):.1f}%;background:{color}"></span>'
        )
    )
    ticks = "".join(
        f'<span style="position:absolute;top:0;bottom:0;left:{100 * _clip(at):.1f}%;'
        f'width:2px;background:{mark_color}"></span>'
        for at, mark_color in marks
    )
    title = f' title="{html.escape(tooltip)}"' if tooltip else ""
    return (
        f'<span class="lnb-gauge" style="white-space:nowrap"{title}>'
        f'<span style="{_BAR.format(w=width)}">{fill}{ticks}</span> '
        f'<span style="font-size:90%">{html.escape(text)}</span></span>'
    )


def temperature_color(
    temperature: float | None, slowdown: float | None, margin: float | None = None
) -> str:
    """The colour of a temperature reading.

    With a thermal ``margin`` (°C): red at or under 0, orange within 5 °C, else green. Without
    one: red at or above slowdown, orange within 5 °C of it (or above 80 °C when it is unknown),
    else green; grey when the temperature is unknown.
    """
    if temperature is None:
        return GREY
    if margin is not None:
        return RED if margin <= 0 else ORANGE if margin <= _WARN_MARGIN else GREEN
    if slowdown is None:
        return ORANGE if temperature >= 80.0 else GREEN
    if temperature >= slowdown:
        return RED
    return ORANGE if temperature >= slowdown - _WARN_MARGIN else GREEN


def thresholds_text(gpu: GpuSample) -> str:
    """``"slowdown 87 °C · shutdown 97 °C · max operating 89 °C"`` (what the GPU reports)."""
    return " · ".join(
        f"{name} {level:.0f} °C"
        for name, level in (
            ("slowdown", gpu.temperature_slowdown),
            ("shutdown", gpu.temperature_shutdown),
            ("max operating", gpu.temperature_max),
            ("memory max", gpu.temperature_memory_max),
        )
        if level is not None
    )


def temperature_html(gpu: GpuSample, width: int = 90) -> str:
    """The temperature bar with the slowdown and shutdown marks, and the margin in words.

    ``"81 °C · 6 °C to slowdown"``; the thresholds are in the tooltip.
    """
    top = (gpu.temperature_shutdown or gpu.temperature_slowdown or 95.0) + 5.0
    marks = [
        (level / top, color)
        for level, color in ((gpu.temperature_slowdown, ORANGE), (gpu.temperature_shutdown, RED))
        if level is not None
    ]
    text = _fmt(gpu.temperature, " °C")
    if gpu.temperature is not None and gpu.temperature_margin is not None:
        text += f" · {describe_margin(gpu.temperature_margin)}"
    fraction = None if gpu.temperature is None else gpu.temperature / top
    color = temperature_color(gpu.temperature, gpu.temperature_slowdown, gpu.temperature_margin)
    return bar_html(fraction, text, color, width, marks, tooltip=thresholds_text(gpu))


def activity_html(gpu: GpuSample) -> str:
    """``"SM 62 % · tensor 41 % · DRAM 35 %"`` with its tooltip; "" without GPM."""
    parts = [
        f"{name} {value:.0f} %"
        for name, value in (
            ("SM", gpu.sm_activity),
            ("tensor", gpu.tensor_activity),
            ("DRAM", gpu.memory_bandwidth),
        )
        if value is not None
    ]
    if not parts:
        return ""
    return (
        f'<span class="lnb-activity" style="white-space:nowrap;font-size:90%;color:#444" '
        f'title="{html.escape(ACTIVITY_TOOLTIP)}">{" · ".join(parts)}</span>'
    )


def _memory_html(gpu: GpuSample, width: int) -> str:
    fraction = None if gpu.memory_percent is None else gpu.memory_percent / 100.0
    color = RED if fraction is not None and fraction >= 0.95 else BLUE
    text = f"{format_bytes(gpu.memory_used)} / {format_bytes(gpu.memory_total)}"
    if gpu.process_memory:
        text += f" (this kernel {format_bytes(gpu.process_memory)})"
    return bar_html(fraction, text, color, width)


def _power_html(gpu: GpuSample, width: int) -> str:
    fraction = None
    if gpu.power_draw is not None and gpu.power_limit:
        fraction = gpu.power_draw / gpu.power_limit
    text = _fmt(gpu.power_draw, " W") + (f" / {gpu.power_limit:.0f} W" if gpu.power_limit else "")
    return bar_html(fraction, text, ORANGE if fraction and fraction >= 0.98 else BLUE, width)


def _reasons_html(reasons: Sequence[str]) -> str:
    chips = []
    for reason in reasons:
        color = RED if reason in THERMAL_REASONS else ORANGE if reason in POWER_REASONS else GREY
        chips.append(
            f'<span style="border:1px solid {color};color:{color};border-radius:3px;'
            f'padding:0 3px;margin-right:3px;font-size:85%">{html.escape(reason)}</span>'
        )
    return "".join(chips)


def _row(label: str, body: str) -> str:
    return (
        f'<div><span style="display:inline-block;width:6.5em;color:#666">{label}</span>{body}</div>'
    )


def _utilisation_html(gpu: GpuSample, width: int) -> str:
    util = bar_html(
        None if gpu.utilization_gpu is None else gpu.utilization_gpu / 100,
        _fmt(gpu.utilization_gpu, " %"),
        BLUE,
        width,
        tooltip=ACTIVITY_TOOLTIP,
    )
    activity = activity_html(gpu)
    return f"{util} {activity}" if activity else util


def gpu_card_html(
    gpu: GpuSample,
    selected: bool = False,
    width: int = 140,
    throttled: ThrottleTime | None = None,
) -> str:
    """Everything ``%gpu_watch`` shows for one GPU (or MIG instance), as HTML.

    ``throttled``: the GPU's throttled time over a recent window (shown beside its reasons).
    """
    title = f"<b>{html.escape(gpu.label)}</b> {html.escape(gpu.name or '')}"
    if selected:
        title += " ◀"
    if gpu.lost:
        lost = f'<span style="color:{RED}">lost (the driver no longer answers)</span>'
        return f"<div>{title}: {lost}</div>"
    rows = [
        _row("utilisation", _utilisation_html(gpu, width)),
        _row("memory", _memory_html(gpu, width)),
    ]
    if gpu.mig_index is None:
        rows += [
            _row("temperature", temperature_html(gpu, width)),
            _row("power", _power_html(gpu, width)),
        ]
        extras = [
            f"fan {_fmt(gpu.fan, ' %')}" if gpu.fan is not None else "",
            f"SM {_fmt(gpu.clock_sm, ' MHz')}" if gpu.clock_sm is not None else "",
            f"P{gpu.pstate}" if gpu.pstate is not None else "",
        ]
        rows.append(_row("clocks", " · ".join(e for e in extras if e) or "N/A"))
        lost = ""  # what throttling cost lately; nothing to say when it cost nothing
        if throttled is not None and throttled.total_s > 0:
            words = html.escape(describe_throttle_time(throttled, of="the last minute"))
            lost = f' <span style="color:#666">{words}</span>'
        rows.append(_row("throttling", (_reasons_html(gpu.clock_reasons) or "none") + lost))
    return f'<div style="margin:2px 0 6px 0">{title}{"".join(rows)}</div>'


def host_html(host: HostSample | None, width: int = 90) -> str:
    """Host CPU % and RAM bars ("" when there is no host sample)."""
    if host is None:
        return ""
    cpu = host.cpu_percent
    memory = None if host.memory_percent is None else host.memory_percent / 100.0
    return (
        "<div><b>host</b> "
        + bar_html(None if cpu is None else cpu / 100.0, f"CPU {_fmt(cpu, ' %')}", BLUE, width)
        + " "
        + bar_html(
            memory,
            f"RAM {format_bytes(host.memory_used)} / {format_bytes(host.memory_total)}",
            BLUE,
            width,
        )
        + "</div>"
    )


def no_gpu_html(reason: str, host: HostSample | None) -> str:
    """The no-GPU state: one line saying why, then the host's CPU and RAM."""
    line = f'<div style="color:#666">{html.escape(reason or "no GPU")}</div>'
    return line + host_html(host)


def compact_gauges_html(snapshot: Snapshot | None, device_index: int | None = None) -> str:
    """Compact GPU gauges for a training dashboard, as HTML.

    One line per GPU (utilisation, memory, temperature with marks, power) for a training dashboard;
    the GPU the run uses is marked. Host CPU/RAM when there is no GPU.
    """
    if snapshot is None:
        return ""
    gpus = [g for g in snapshot.gpus if g.mig_index is None]
    if not gpus:
        return no_gpu_html(snapshot.reason, snapshot.host)
    rows = []
    for gpu in gpus:
        mark = " ◀" if device_index is not None and gpu.index == device_index else ""
        label = html.escape(gpu.label)  # "GPU 0", or "GPU 0 on node-b" for a Ray worker's
        if gpu.lost:
            rows.append(f"<div><b>{label}</b>{mark} lost</div>")
            continue
        util = None if gpu.utilization_gpu is None else gpu.utilization_gpu / 100.0
        memory = None if gpu.memory_percent is None else gpu.memory_percent / 100.0
        sm = f" (SM {gpu.sm_activity:.0f} %)" if gpu.sm_activity is not None else ""
        rows.append(
            f"<div><b>{label}</b>{mark} "
            + bar_html(
                util, f"{_fmt(gpu.utilization_gpu, ' %')}{sm}", BLUE, 50, tooltip=ACTIVITY_TOOLTIP
            )
            + " "
            + bar_html(memory, format_bytes(gpu.memory_used), BLUE, 50)
            + " "
            + temperature_html(gpu, 60)
            + " "
            + _power_html(gpu, 50)
            + (" " + _reasons_html([r for r in gpu.clock_reasons if r != "gpu_idle"]))
            + "</div>"
        )
    return "".join(rows)


class MiniGauges:
    """A compact gauge row widget for the training dashboard.

    ``writes(snapshot)`` returns ``{self.widget: {"value": html}}`` when the row changed
    and ``{}`` otherwise; the caller applies it (the pump stays the only writer).

    Args:
        device_index: The GPU the run uses (marked); None when unknown.
    """

    def __init__(self, device_index: int | None = None) -> None:
        import ipywidgets as widgets

        self.device_index = device_index
        self.widget = widgets.HTML("")
        self._last = ""

    def writes(self, snapshot: Snapshot | None) -> dict[object, dict[str, object]]:
        """The widget writes that show ``snapshot``; empty when nothing changed."""
        text = compact_gauges_html(snapshot, self.device_index)
        if text == self._last:
            return {}
        self._last = text
        return {self.widget: {"value": text}}


def clock_text(t: float) -> str:
    """``HH:MM:SS`` local time of a wall-clock time (seconds)."""
    return time.strftime("%H:%M:%S", time.localtime(t))
