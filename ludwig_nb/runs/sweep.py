"""``estimate(config, dataset, vary={"trainer.batch_size": [32, 64, 128]})``.

The fastest batch size before training, from one short pilot per value.

Each value gets the pre-flight pilot (``runs/preflight.py``: a few dozen steps, one
evaluation, one checkpoint) with the config changed at that path; the pilot's stable step
time costs the whole run's schedule at that value. On a CUDA device the allocator's peak
during the pilot is the value's memory; a value whose pilot runs out of memory, or whose
peak exceeds ``memory_fraction`` of the device, does not fit. The fastest value that fits
is marked.

Batch size is not only a speed knob: it changes the number of updates per epoch and the
noise in each, so the model learns differently. :data:`LEARNING_NOTE` says so wherever the
result is shown.
"""

from __future__ import annotations

import copy
import dataclasses
import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ludwig_nb.core.formatting import format_duration

if TYPE_CHECKING:
    import pandas as pd

    from ludwig_nb.config import ConfigSource

__all__ = ["LEARNING_NOTE", "SweepEstimate", "SweepPoint", "estimate_sweep", "parse_vary"]

LEARNING_NOTE = (
    "Batch size changes what the model learns, not only how fast it trains: a larger batch "
    "makes fewer, less noisy updates per epoch and usually needs a larger learning rate or "
    "more epochs to reach the same accuracy. Compare the trained runs' metrics "
    "(ludwig_nb.compare) before choosing on speed alone."
)
_OOM = ("out of memory", "outofmemory", "cuda error: out of memory")


@dataclasses.dataclass(frozen=True)
class SweepPoint:
    """One value's prediction.

    Seconds, samples/s, bytes; ``fits`` False with ``error`` set when the pilot ran out of memory
    (or failed for another reason).
    """

    value: object
    fits: bool
    total_s: float | None = None
    epoch_s: float | None = None
    step_s: float | None = None
    samples_per_s: float | None = None
    steps_per_epoch: int | None = None
    epochs: int | None = None
    peak_memory: int | None = None
    memory_total: int | None = None
    error: str = ""


class SweepEstimate:
    """The sweep's result.

    ``points`` in the order given, ``fastest`` (the value that fits with the smallest predicted
    total time), ``to_frame()`` and an HTML table + plot.

    Args:
        path: The swept config path, e.g. ``trainer.batch_size``.
        points: One prediction per value.
        device: The device the pilots ran on.
    """

    def __init__(self, path: str, points: Sequence[SweepPoint], device: str) -> None:
        self.path = path
        self.points = list(points)
        self.device = device
        fitting = [p for p in self.points if p.fits and p.total_s is not None]
        self.fastest: SweepPoint | None = min(fitting, key=lambda p: p.total_s or 0.0, default=None)

    def to_frame(self) -> pd.DataFrame:
        """The predictions as a DataFrame, one row per value of the swept parameter."""
        import pandas as pd

        rows = [dataclasses.asdict(p) for p in self.points]
        frame = pd.DataFrame(rows).rename(columns={"value": self.path})
        frame["fastest"] = [self.fastest is not None and p is self.fastest for p in self.points]
        return frame

    def __repr__(self) -> str:
        best = "none fits" if self.fastest is None else f"fastest: {self.fastest.value}"
        return f"<SweepEstimate {self.path} over {[p.value for p in self.points]}: {best}>"

    def _repr_html_(self) -> str:
        return sweep_html(self)


def parse_vary(vary: object) -> tuple[str, list[object]]:
    """``{"trainer.batch_size": [32, 64]}`` -> ``("trainer.batch_size", [32, 64])``.

    Raises ``ValueError`` saying what is expected for anything else.
    """
    if not isinstance(vary, Mapping) or len(vary) != 1:
        raise ValueError(
            'vary takes one config path and its values, e.g. {"trainer.batch_size": [32, 64, 128]}'
        )
    ((path, values),) = vary.items()
    if not isinstance(path, str) or not path or isinstance(values, (str, bytes)):
        raise ValueError(f"vary: {path!r} must be a dotted config path with a list of values")
    values = list(values) if isinstance(values, Sequence) else None
    if not values:
        raise ValueError(f"vary: {path!r} needs at least one value")
    if len(set(map(repr, values))) != len(values):
        raise ValueError(f"vary: {path!r} lists a value twice")
    return path, values


def _with_value(rendered: Mapping[str, object], path: str, value: object) -> dict[str, object]:
    config = copy.deepcopy(dict(rendered))
    node: Any = config
    keys = path.split(".")
    for key in keys[:-1]:
        if not isinstance(node.get(key), dict):
            raise ValueError(
                f"vary: {path!r} is not a path of this config ({key!r} is not a section)"
            )
        node = node[key]
    if keys[-1] not in node:
        raise ValueError(f"vary: {path!r} is not a key of this config")
    node[keys[-1]] = value
    return config


def _point(
    rendered: Mapping[str, object],
    dataset: object,
    path: str,
    value: object,
    options: Mapping[str, Any],
) -> SweepPoint:
    from ludwig_nb.config import load_config
    from ludwig_nb.runs.preflight import pilot_run, predict_from_pilot

    config = load_config(_with_value(rendered, path, value)).to_dict()
    meter = options["engine"].devices().peak_memory(options["device"])
    if meter is not None:  # pilots on a GPU: its allocator's peak is the memory
        meter.reset()
    run = pilot_run(
        config, dataset, options["steps"], device=options["device"], engine=options["engine"]
    )
    peak = total = None
    if meter is not None:
        peak, total = meter.read()
    if run.status != "completed":
        message = run.state.error or run.status
        message = ("out of memory: " if _is_oom(message) else "") + message
        return SweepPoint(value, fits=False, peak_memory=peak, memory_total=total, error=message)
    prediction = predict_from_pilot(run, config, options["engine"])
    schedule = prediction.schedule
    fits = peak is None or total is None or peak <= options["memory_fraction"] * total
    return SweepPoint(
        value,
        fits=fits,
        total_s=prediction.total_s,
        epoch_s=_epoch_s(prediction),
        step_s=prediction.step_s,
        samples_per_s=schedule.batch_size / prediction.step_s if prediction.step_s else None,
        steps_per_epoch=schedule.steps_per_epoch,
        epochs=schedule.epochs,
        peak_memory=peak,
        memory_total=total,
        error=""
        if fits
        else f"peak {peak} bytes is over {options['memory_fraction']:.0%} of the device's {total}",
    )


def _epoch_s(prediction: Any) -> float:
    """Seconds per epoch of training proper.

    Steps, warm-up, evaluations and checkpoints (preprocessing and the final save happen once per
    run, not per epoch).
    """
    breakdown = prediction.breakdown
    once = float(breakdown.get("preprocessing", 0.0)) + float(breakdown.get("final_save", 0.0))
    return max(0.0, float(prediction.total_s) - once) / max(1, int(prediction.schedule.epochs))


def _is_oom(message: str) -> bool:
    text = message.lower().replace(" ", "")
    return any(s.replace(" ", "") in text for s in _OOM)


def estimate_sweep(
    config: ConfigSource,
    dataset: object,
    vary: object,
    *,
    device: str | None = None,
    pilot_steps: int | None = None,
    engine: str = "auto",
    memory_fraction: float = 0.95,
) -> SweepEstimate:
    """One pilot per value of ``vary`` (see the module doc).

    Raises ``ConfigError`` for a config (or a varied value) that does not validate, ``ValueError``
    for a bad ``vary``, ``DataError`` for the dataset, like :func:`ludwig_nb.train`.
    """
    from ludwig_nb.config import Config, load_config
    from ludwig_nb.engines.registry import select_engine
    from ludwig_nb.runs.preflight import _DEFAULT_PILOT_STEPS

    path, values = parse_vary(vary)
    cfg = config if isinstance(config, Config) else load_config(config)
    rendered = cfg.to_dict()
    chosen = select_engine(engine, cfg)
    for value in values:  # every value is checked before the first pilot starts
        chosen.check(load_config(_with_value(rendered, path, value)))
    chosen.warm_up()  # the pilots' first steps must measure the run, not one-off imports
    options = {
        "device": device,
        "engine": chosen,
        "memory_fraction": memory_fraction,
        "steps": pilot_steps or _DEFAULT_PILOT_STEPS,
    }
    points = [_point(rendered, dataset, path, value, options) for value in values]
    on_gpu = chosen.devices().peak_memory(device) is not None
    return SweepEstimate(path, points, "cuda" if on_gpu else (device or "cpu"))


# -- the view (plain HTML and CSS bars: it survives saving the notebook) -------------------
def _bytes(count: int | None) -> str:
    if count is None:
        return "n/a"
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def _bar(seconds: float | None, longest: float, color: str) -> str:
    if seconds is None or longest <= 0:
        return ""
    width = max(1.0, 100.0 * seconds / longest)
    return (
        f"<div style='background:{color};height:9px;margin:1px 0;width:{width:.1f}%' "
        f"title='{seconds:.3g} s'></div>"
    )


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3g} s" if value < 60 else format_duration(value)


def sweep_html(sweep: SweepEstimate) -> str:
    """A table with bars per value (predicted time per epoch, total), the fastest marked."""
    longest = max((p.total_s or 0.0 for p in sweep.points), default=0.0)
    longest_epoch = max((p.epoch_s or 0.0 for p in sweep.points), default=0.0)
    memory_na = "n/a" if sweep.device.startswith("cuda") else "n/a on CPU"
    rows = []
    for p in sweep.points:
        fastest = p is sweep.fastest
        color = "#2e7d32" if fastest else ("#c62828" if not p.fits else "#90a4ae")
        mark = " ★ fastest that fits" if fastest else ("" if p.fits else " ✗ does not fit")
        cells = [
            f"<b>{html.escape(str(p.value))}</b>{html.escape(mark)}",
            _seconds(p.epoch_s),
            _seconds(p.total_s),
            f"{p.samples_per_s:,.0f}" if p.samples_per_s else "—",
            memory_na if p.peak_memory is None else _bytes(p.peak_memory),
        ]
        tds = "".join(f"<td style='padding:2px 8px'>{c}</td>" for c in cells)
        bar = _bar(p.epoch_s, longest_epoch, "#1565c0") + _bar(p.total_s, longest, color)
        err = f"<br><small style='color:#c62828'>{html.escape(p.error)}</small>" if p.error else ""
        rows.append(f"<tr>{tds}<td style='width:40%'>{bar}{err}</td></tr>")
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            html.escape(sweep.path),
            "time/epoch",
            "total",
            "samples/s",
            "peak GPU memory",
            "predicted: time/epoch (blue), total",
        )
    )
    best = "no value fits" if sweep.fastest is None else f"fastest that fits: {sweep.fastest.value}"
    return (
        "<div class='ludwig-nb-sweep' style='border:1px solid #ddd;border-radius:4px;"
        f"padding:6px 10px'><b>pre-flight sweep of {html.escape(sweep.path)}</b> on "
        f"{html.escape(sweep.device)}: {html.escape(best)}"
        f"<table>{''.join([f'<tr>{head}</tr>', *rows])}</table>"
        f"<div style='color:#555;font-size:90%'>⚠ {html.escape(LEARNING_NOTE)}</div></div>"
    )
