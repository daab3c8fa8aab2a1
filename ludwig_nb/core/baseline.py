"""Metrics beside the trivial baseline: "test churn accuracy 0.941 · always 'no': 0.859".

Pure functions over the metric mappings of ``RunState`` (``best_metrics``, ``baseline``,
``baseline_predictors``), shared by the dashboard summary, the text view, the CLI and
``status.json`` readers, so a useless model is visible at a glance wherever metrics are.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "Comparison",
    "baseline_warnings",
    "compare_to_baseline",
    "format_comparison",
    "headline_split",
]

#: metric shown beside the baseline, in order of preference; True = higher is better
_HEADLINE_METRICS = (
    ("accuracy", True),
    ("mean_absolute_error", False),
    ("root_mean_squared_error", False),
    ("r2", True),
    ("roc_auc", True),
)
_SPLIT_ORDER = ("test", "validation", "training")
#: a model "clearly" beats the baseline when it closes this share of the gap to perfect
CLEAR_GAIN = 0.1


@dataclasses.dataclass(frozen=True)
class Comparison:
    """One output feature's headline metric next to the baseline's on the same split.

    ``gain``: the share of the baseline's gap to a perfect score the model closed (1 =
    perfect, 0 = no better, negative = worse); None when it cannot be said.
    """

    split: str
    feature: str
    metric: str
    value: float
    baseline: float
    predictor: str
    gain: float | None

    @property
    def verdict(self) -> str:
        """``"better"``, ``"barely better"`` or ``"no better"`` than the baseline."""
        if self.gain is None or self.gain >= CLEAR_GAIN:
            return "better"
        return "barely better" if self.gain > 0 else "no better"


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def headline_split(metrics: Mapping[str, object]) -> str | None:
    """The split a summary leads with: test, else validation, else training."""
    return next((s for s in _SPLIT_ORDER if isinstance(metrics.get(s), Mapping)), None)


def _gain(value: float, baseline: float, higher: bool) -> float | None:
    """The fraction of the gap from ``baseline`` to a perfect score that ``value`` closes.

    None when the baseline is already perfect (no gap to close).
    """
    perfect = 1.0 if higher else 0.0
    gap = perfect - baseline if higher else baseline - perfect
    if gap <= 0:
        return None
    return (value - baseline) / gap if higher else (baseline - value) / gap


def _compare_feature(
    split: str,
    feature: str,
    model: Mapping[str, object],
    base: Mapping[str, object],
    predictor: str,
) -> Comparison | None:
    for metric, higher in _HEADLINE_METRICS:
        value, baseline = _number(model.get(metric)), _number(base.get(metric))
        if value is None or baseline is None:
            continue
        gain = _gain(value, baseline, higher)
        return Comparison(split, feature, metric, value, baseline, predictor, gain)
    return None


def compare_to_baseline(
    metrics: Mapping[str, Any],
    baseline: Mapping[str, Any],
    predictors: Mapping[str, str],
) -> list[Comparison]:
    """Compare each output feature's headline metric with its trivial baseline.

    One :class:`Comparison` per output feature that has a baseline, on the headline split of
    ``metrics`` (``{split: {feature: {metric: value}}}``); [] when none.
    """
    split = headline_split(metrics)
    if split is None:
        return []
    model_split, base_split = metrics.get(split) or {}, baseline.get(split) or {}
    out = []
    for feature, predictor in predictors.items():
        model, base = model_split.get(feature), base_split.get(feature)
        if not isinstance(model, Mapping) or not isinstance(base, Mapping):
            continue
        found = _compare_feature(split, feature, model, base, predictor)
        if found is not None:
            out.append(found)
    return out


def format_comparison(comparison: Comparison, with_split: bool = True) -> str:
    """Format a comparison with its baseline as one line.

    ``"test churn accuracy 0.9412 · always 'no': 0.859"`` (+ a warning when the model is not clearly
    better: ``"· ⚠ barely better than the baseline"``).
    """
    c = comparison
    where = f"{c.split} " if with_split else ""
    text = f"{where}{c.feature} {c.metric} {c.value:.4g} · {c.predictor}: {c.baseline:.4g}"
    if c.verdict != "better":
        text += f" · ⚠ {c.verdict} than the baseline"
    return text


def baseline_warnings(
    metrics: Mapping[str, Any], baseline: Mapping[str, Any], predictors: Mapping[str, str]
) -> list[str]:
    """The comparisons a model does not clearly win, each as :func:`format_comparison` words it.

    ``["test churn accuracy 0.708 · always 'no': 0.865 · ⚠ no better than the baseline"]``;
    [] when every output beats its baseline clearly (or none has one). The CLI, the text view
    and ``--json`` all print these lines.
    """
    versus = compare_to_baseline(metrics, baseline, predictors)
    return [format_comparison(c) for c in versus if c.verdict != "better"]
