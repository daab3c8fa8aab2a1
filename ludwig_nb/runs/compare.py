"""``compare(A, B, ...)``: metrics, config, time and resources of any runs, side by side.

Sources are run handles, ludwig_nb run directories or Ludwig output directories
(``runs/compare_sources.py``). The first run is the base: deltas are ``run - base``.
:class:`Comparison` is data (``to_frame()``, ``config_diff``, ``warnings``, ``curves``);
the notebook view (``ui/compare_view.py``) registers itself as its HTML renderer, so a
comparison shows as a static panel that survives saving the notebook.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ludwig_nb.runs.compare_data import dataset_label, datasets_differ
from ludwig_nb.runs.compare_sources import Curve, RunRecord, load_source

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Comparison", "compare", "flatten_config", "metric_goal"]

_MAXIMIZE = {
    "accuracy",
    "roc_auc",
    "r2",
    "precision",
    "recall",
    "f1",
    "specificity",
    "jaccard",
    "hits_at_k",
    "token_accuracy",
    "sequence_accuracy",
    "steps_per_s",
    "samples_per_s",
}
_MISSING = object()

#: (row label, path in the profile summary, goal); seconds, J, bytes, °C, % of the run
RESOURCE_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("time: total (s)", ("total_s",), "min"),
    ("time: preprocessing (s)", ("phase_s", "preprocessing"), "min"),
    ("time: training (s)", ("phase_s", "training"), "min"),
    ("time: evaluation (s)", ("phase_s", "evaluation"), "min"),
    ("time: checkpoint (s)", ("phase_s", "checkpoint"), "min"),
    ("throughput: steps/s", ("steps_per_s",), "max"),
    ("throughput: samples/s", ("samples_per_s",), "max"),
    ("resources: energy (J)", ("energy_j",), "min"),
    ("resources: J/sample", ("j_per_sample",), "min"),
    ("resources: peak GPU memory (bytes)", ("peak_gpu_memory",), "min"),
    ("resources: peak RSS (bytes)", ("host", "peak_rss"), "min"),
    ("resources: peak temperature (°C)", ("peak_temperature",), "min"),
    ("resources: throttled (% of the run)", ("throttle", "percent"), "min"),
    ("resources: throttled, thermal (%)", ("throttle", "causes_percent", "thermal"), "min"),
    ("resources: throttled, power cap (%)", ("throttle", "causes_percent", "power_cap"), "min"),
    ("resources: throttled, power brake (%)", ("throttle", "causes_percent", "power_brake"), "min"),
    ("resources: throttled, sync boost (%)", ("throttle", "causes_percent", "sync_boost"), "min"),
)


def metric_goal(metric: str) -> str:
    """Return ``"max"`` or ``"min"``: which way ``metric`` improves.

    ``"max"`` for metrics where higher is better (accuracy, ROC AUC, R², ...), else ``"min"`` (loss,
    errors, time, energy, memory).
    """
    name = metric.rsplit(" ", 1)[-1].rsplit(".", maxsplit=1)[-1]
    return "max" if name in _MAXIMIZE or metric.endswith("/s") else "min"


def flatten_config(config: object, prefix: str = "") -> dict[str, object]:
    """Dotted paths to leaf values.

    Features are keyed by name (``input_features[age].encoder.type``) so reordering them is not a
    difference.
    """
    out: dict[str, object] = {}
    if isinstance(config, Mapping):
        for key, value in config.items():
            out.update(flatten_config(value, f"{prefix}.{key}" if prefix else str(key)))
    elif (
        isinstance(config, list)
        and config
        and all(isinstance(item, Mapping) and "name" in item for item in config)
    ):
        for item in config:
            out.update(flatten_config(item, f"{prefix}[{item['name']}]"))
    else:
        out[prefix] = config
    return out


class Comparison:
    """Two or more runs compared; see :func:`compare`.

    Args:
        records: What each run compared holds, in the order given.
    """

    #: set by ``ludwig_nb.ui.compare_view``: ``Comparison -> HTML``
    renderer: ClassVar[Callable[[Comparison], str] | None] = None

    def __init__(self, records: Sequence[RunRecord]) -> None:
        self.records = list(records)
        self.names = _unique([r.name for r in self.records])

    # -- metrics and resources ------------------------------------------------------
    def rows(self) -> list[dict[str, Any]]:
        """One dict per metric / resource figure.

        ``metric``, ``kind``, ``goal``, one value per run name, ``delta``/``delta_pct`` per later
        run (vs the base), ``better``.
        """
        order = {"test": 0, "validation": 1, "training": 2}
        keys = sorted(
            {k for r in self.records for k in r.metrics}, key=lambda k: (order.get(k[0], 9), k)
        )
        out = []
        for split, feature, metric in keys:
            values = [r.metrics.get((split, feature, metric)) for r in self.records]
            out.append(
                self._row(f"{split}.{feature}.{metric}", "metric", metric_goal(metric), values)
            )
        for label, path, goal in RESOURCE_ROWS:
            values = [_dig(r.profile, path) for r in self.records]
            if any(v is not None for v in values):
                out.append(self._row(label, "resource", goal, values))
        return out

    def _row(self, label: str, kind: str, goal: str, values: list[Any]) -> dict[str, object]:
        row: dict[str, object] = {"metric": label, "kind": kind, "goal": goal}
        row.update(zip(self.names, values, strict=True))
        base = values[0]
        for name, value in zip(self.names[1:], values[1:], strict=True):
            delta = None if base is None or value is None else value - base
            suffix = "" if len(self.names) == 2 else f" {name}"
            row[f"delta{suffix}"] = delta
            row[f"delta_pct{suffix}"] = (
                None
                if delta is None
                else (
                    math.inf
                    if base == 0 and delta
                    else (0.0 if base == 0 else 100.0 * delta / abs(base))
                )
            )
        row["better"] = _better(self.names, values, goal)
        return row

    def to_frame(self) -> pd.DataFrame:
        """The rows as a DataFrame indexed by ``metric`` (a run's missing value is NaN)."""
        import pandas as pd

        frame = pd.DataFrame(self.rows())
        return frame.set_index("metric") if not frame.empty else frame

    # -- config ---------------------------------------------------------------------
    @property
    def config_all(self) -> dict[str, tuple[object, ...]]:
        """Every config path with each run's value (``None`` where a run lacks it)."""
        flat = [flatten_config(r.config) for r in self.records]
        paths = sorted({p for f in flat for p in f})
        return {p: tuple(f.get(p) for f in flat) for p in paths}

    @property
    def config_diff(self) -> dict[str, tuple[object, ...]]:
        """Only what differs between the runs, as a user changed it.

        A feature some runs lack is one path, ``input_features[name]``, with each run's
        feature type (None where it is absent), not one row per default it renders to; keys
        Ludwig derives itself (``proc_column``) are left out.
        """
        everything = self.config_all
        absent = _absent_features(everything)
        out: dict[str, tuple[object, ...]] = {}
        for path, values in everything.items():
            feature = _feature_of(path)
            if feature in absent:
                out[feature] = absent[feature]
            elif path.rsplit(".", 1)[-1] not in _DERIVED and len({_key(x) for x in values}) > 1:
                out[path] = values
        return out

    @property
    def config_changes(self) -> list[str]:
        """:attr:`config_diff` in words, each later run against the first.

        ``"fast: removed input feature total_intl_calls"``, ``"fast: trainer.batch_size 32 ->
        64"``.
        """
        out = []
        for path, values in self.config_diff.items():
            base = values[0]
            for name, value in zip(self.names[1:], values[1:], strict=True):
                if _key(value) == _key(base):
                    continue
                out.append(f"{name}: {_change(path, base, value)}")
        return out

    # -- validity -------------------------------------------------------------------
    @property
    def warnings(self) -> list[str]:
        """Why the runs may not be comparable: data, splits, hardware, precision, outputs."""
        out = []
        diff = self.config_diff
        facts = [r.facts for r in self.records]
        if datasets_differ(facts):
            out.append("different datasets: " + _pairs(self.names, map(dataset_label, facts)))
        split = sorted(p for p in diff if p.startswith("preprocessing.split"))
        if split:
            out.append("different splits: " + ", ".join(split))
        hardware = [r.hardware for r in self.records]
        # a bare "cuda:N" (a GPU run that ended before the sampler named its GPU) says
        # nothing against a named GPU: only CPU and named GPUs are compared
        if len({h for h in hardware if h and not h.startswith("cuda")}) > 1:
            out.append("different hardware: " + _pairs(self.names, hardware))
        precision = [p for p in diff if "precision" in p]
        if precision:
            out.append("different precision: " + ", ".join(precision))
        outputs = [
            tuple(sorted(f["name"] for f in r.config.get("output_features") or []))
            for r in self.records
        ]
        if len(set(outputs)) > 1:
            out.append("different output features: metrics of one run are missing in another")
        return out

    # -- curves ---------------------------------------------------------------------
    def curves(self, split: str, feature: str, metric: str, x: str = "step") -> dict[str, Any]:
        """``{run name: (xs, ys)}`` for one metric; ``x``: "step", "epoch" or "elapsed".

        Raises ``ValueError`` for another ``x``.
        """
        if x not in ("step", "epoch", "elapsed"):
            raise ValueError(f"x must be 'step', 'epoch' or 'elapsed', got {x!r}")
        out = {}
        for name, record in zip(self.names, self.records, strict=True):
            curve: Curve | None = record.curves.get((split, feature, metric))
            if curve is None:
                continue
            points = [
                (a, b)
                for a, b in zip(getattr(curve, x), curve.value, strict=True)
                if a is not None and b is not None
            ]
            if points:
                out[name] = ([p[0] for p in points], [p[1] for p in points])
        return out

    def headline_curves(self) -> list[tuple[str, str, str]]:
        """The curves worth drawing: combined loss and each output's validation metrics."""
        keys = {k for r in self.records for k in r.curves}
        picked = [k for k in sorted(keys) if k[0] == "validation"]
        return picked or sorted(k for k in keys if k[0] == "training")

    # -- display --------------------------------------------------------------------
    def _repr_html_(self) -> str:
        renderer = type(self).renderer
        if renderer is None:
            return self.to_frame().to_html()
        return renderer(self)

    def __repr__(self) -> str:
        return f"<Comparison of {', '.join(self.names)}: {len(self.config_diff)} config change(s)>"


def compare(*sources: object, names: Sequence[str] | None = None) -> Comparison:
    """Compare runs.

    Handles, ludwig_nb run directories or Ludwig output directories; the first is the base. Raises
    ``ValueError`` for fewer than two, ``FileNotFoundError`` for a path that is not a run.
    """
    if len(sources) == 1 and isinstance(sources[0], (list, tuple)):
        sources = tuple(sources[0])
    if len(sources) < 2:
        raise ValueError("compare needs at least two runs (handles or run directories)")
    if names is not None and len(names) != len(sources):
        raise ValueError(f"names has {len(names)} entries for {len(sources)} runs")
    return Comparison([load_source(s, names[i] if names else None) for i, s in enumerate(sources)])


#: config keys Ludwig derives from others (a feature's column name with a hash): never a change
_DERIVED = ("proc_column",)


def _feature_of(path: str) -> str:
    """``"input_features[age]"`` for a path under that feature, else ``""``."""
    head = path.split(".", 1)[0]
    return head if head.endswith("]") and "_features[" in head else ""


def _absent_features(paths: Mapping[str, tuple[object, ...]]) -> dict[str, tuple[object, ...]]:
    """The features some runs lack: ``{"input_features[x]": (type or None per run)}``."""
    present: dict[str, list[bool]] = {}
    types: dict[str, tuple[object, ...]] = {}
    for path, values in paths.items():
        feature = _feature_of(path)
        if not feature:
            continue
        seen = present.setdefault(feature, [False] * len(values))
        for i, value in enumerate(values):
            seen[i] = seen[i] or value is not None
        if path == f"{feature}.type":
            types[feature] = values
    return {
        f: types.get(f, tuple("present" if p else None for p in seen))
        for f, seen in present.items()
        if not all(seen)
    }


def _change(path: str, base: object, value: object) -> str:
    """One change in words: a feature added or removed, or a path's old and new value."""
    feature = _feature_of(path)
    if feature and path == feature:
        side, name = feature.split("[", 1)
        kind = side.removesuffix("_features").replace("_", " ")
        verb = "removed" if value is None else "added"
        return f"{verb} {kind} feature {name.rstrip(']')}"
    return f"{path} {base} -> {value}"


def _dig(data: Mapping[str, object], path: tuple[str, ...]) -> Any:
    value: object = data
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _better(names: list[str], values: list[object], goal: str) -> str | None:
    present = [
        (v, n)
        for n, v in zip(names, values, strict=True)
        if isinstance(v, (int, float)) and not math.isnan(v)
    ]
    if len(present) < 2 or len({v for v, _ in present}) == 1:
        return None
    return (min(present) if goal == "min" else max(present))[1]


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def _key(value: object) -> str:
    return repr(value)


def _pairs(names: Sequence[str], values: Iterable[object]) -> str:
    return ", ".join(f"{n}={v}" for n, v in zip(names, values, strict=True))
