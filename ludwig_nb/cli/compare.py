"""``ludwig-nb compare``: runs (ours or Ludwig's output directories) side by side."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ludwig_nb.runs.compare import Comparison

__all__ = ["metrics_text", "run"]


def run(args: argparse.Namespace) -> int:
    """Compare runs: the config diff and the metrics table (``--json``: as JSON)."""
    from ludwig_nb.core import strict_json
    from ludwig_nb.runs.compare import compare

    comparison = compare(*args.runs)
    config = comparison.config_all if args.all_config else comparison.config_diff
    if args.json:  # strict JSON: a NaN or an infinite delta is null, listed under nonfinite
        document = {
            "runs": comparison.names,
            "warnings": comparison.warnings,
            "config": {p: list(v) for p, v in config.items()},
            "rows": comparison.rows(),
        }
        print(strict_json.dumps(strict_json.flagged(document), indent=1))
        return 0
    # one write: a reader that stops early (| head) has the text in its pipe already
    print(_text(comparison, config if args.all_config else None))
    return 0


def _text(comparison: Comparison, everything: dict[str, tuple[object, ...]] | None) -> str:
    """The warnings, the config changes (or ``everything``) and the metrics table."""
    lines = [f"warning: {warning}" for warning in comparison.warnings]
    if everything is not None:
        lines.append(f"config ({len(everything)} paths):")
        lines += [f"  {p}: " + " | ".join(str(v) for v in vs) for p, vs in everything.items()]
    else:
        changes = comparison.config_changes
        lines.append(f"config ({len(changes)} change(s)):")
        lines += [f"  {change}" for change in changes]
    lines.append(metrics_text(comparison.names, comparison.rows()))
    return "\n".join(lines)


def metrics_text(names: list[str], rows: list[dict[str, object]]) -> str:
    """The metric and resource rows as an aligned table, each value in its unit.

    Bytes as ``"327 MiB"``, seconds as ``"4.2 s"``, other numbers to 4 significant digits
    (grouped from 1,000),
    a missing value as ``"–"``; the delta of each later run against the first, and the better run.
    """
    deltas = [k for k in (rows[0] if rows else {}) if k.startswith("delta") and "pct" not in k]
    head = ["metric", *names, *(d.replace("delta", "Δ").strip() for d in deltas), "better"]
    table = [head]
    for row in rows:
        label = str(row["metric"])
        unit = _unit(label)
        shown = label.replace(" (bytes)", "").replace(" (s)", "")
        values = [_value(row.get(n), unit) for n in names]
        changes = [
            _delta(row.get(d), row.get(d.replace("delta", "delta_pct")), unit) for d in deltas
        ]
        table.append([shown, *values, *changes, str(row.get("better") or "")])
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in table
    )


def _unit(label: str) -> str:
    return "bytes" if label.endswith("(bytes)") else "s" if label.endswith("(s)") else ""


def _value(value: object, unit: str) -> str:
    from ludwig_nb.core.formatting import format_bytes, format_duration_fine

    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return "–"
    if unit == "bytes":
        return format_bytes(value)
    if unit == "s":
        return format_duration_fine(value)
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def _delta(delta: object, pct: object, unit: str) -> str:
    if not isinstance(delta, int | float) or math.isnan(delta):
        return "–"
    sign = "+" if delta > 0 else "-" if delta < 0 else "±"
    text = f"{sign}{_value(abs(delta), unit)}"
    if isinstance(pct, int | float) and math.isfinite(pct):
        text += f" ({pct:+.1f} %)"
    return text
