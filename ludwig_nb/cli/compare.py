"""``ludwig-nb compare``: runs (ours or Ludwig's output directories) side by side."""

from __future__ import annotations

import argparse
import json
import math

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """Compare runs: the config diff and the metrics table (``--json``: as JSON)."""
    from ludwig_nb.runs.compare import compare

    comparison = compare(*args.runs)
    config = comparison.config_all if args.all_config else comparison.config_diff
    if args.json:
        rows = [
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            for row in comparison.rows()
        ]
        print(
            json.dumps(
                {
                    "runs": comparison.names,
                    "warnings": comparison.warnings,
                    "config": {p: list(v) for p, v in config.items()},
                    "rows": rows,
                },
                indent=1,
                default=str,
            )
        )
        return 0
    for warning in comparison.warnings:
        print(f"warning: {warning}")
    print(f"config ({len(comparison.config_diff)} change(s)):")
    for path, values in config.items():
        print(f"  {path}: " + " | ".join(str(v) for v in values))
    frame = comparison.to_frame().drop(columns=["kind"], errors="ignore")
    print(frame.to_string(float_format=lambda v: f"{v:.6g}"))
    return 0
