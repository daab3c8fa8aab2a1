"""Metrics as an aligned plain-text table, for terminals and ``text/plain`` (pure).

feature  metric    training  validation  test    trivial baseline (test)
churn    accuracy         –      0.9520  0.9450  always 'no': 0.865
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ludwig_nb.core.baseline import headline_split

__all__ = ["format_value", "metrics_text_table"]

_SPLITS = ("training", "validation", "test")


def format_value(value: object) -> str:
    """Four significant digits; ``"–"`` for what is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "–"
    return f"{value:.4g}"


def _rows(
    metrics: Mapping[str, Any], splits: list[str]
) -> dict[tuple[str, str], dict[str, object]]:
    rows: dict[tuple[str, str], dict[str, object]] = {}
    for split in splits:
        for feature, names in metrics[split].items():
            if isinstance(names, Mapping):
                for name, value in names.items():
                    rows.setdefault((str(feature), str(name)), {})[split] = value
    return rows


def metrics_text_table(
    metrics: Mapping[str, object],
    baseline: Mapping[str, Any] | None = None,
    predictors: Mapping[str, str] | None = None,
) -> str:
    """Format ``{split: {feature: {metric: value}}}`` as a plain-text table.

    Rows of feature and metric with a column per split, and the trivial baseline on the headline
    split last; ``""`` when empty.
    """
    splits = [s for s in _SPLITS if isinstance(metrics.get(s), Mapping)]
    splits += [s for s in metrics if s not in splits and isinstance(metrics[s], Mapping)]
    rows = _rows(metrics, splits)
    if not rows:
        return ""
    lead = headline_split(metrics) or ""
    base = (baseline or {}).get(lead) or {}
    header = ["feature", "metric", *splits]
    with_base = any(isinstance(base.get(f), Mapping) and m in base[f] for f, m in rows)
    if with_base:
        header.append(f"trivial baseline ({lead})")
    table = [header]
    for (feature, name), values in rows.items():
        row = [feature, name, *(format_value(values.get(s)) for s in splits)]
        if with_base:
            value = (base.get(feature) or {}).get(name)
            row.append(
                f"{(predictors or {}).get(feature, 'baseline')}: {format_value(value)}"
                if value is not None
                else ""
            )
        table.append(row)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    numeric = range(2, 2 + len(splits))
    lines = [
        "  ".join(
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(r)
        ).rstrip()
        for r in table
    ]
    return "\n".join(lines)
