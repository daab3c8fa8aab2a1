"""``ludwig-nb compare``: runs (ours or Ludwig's output directories) side by side."""

from __future__ import annotations

import argparse

__all__ = ["run"]


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
    for warning in comparison.warnings:
        print(f"warning: {warning}")
    print(f"config ({len(comparison.config_diff)} change(s)):")
    for path, values in config.items():
        print(f"  {path}: " + " | ".join(str(v) for v in values))
    frame = comparison.to_frame().drop(columns=["kind"], errors="ignore")
    print(frame.to_string(float_format=lambda v: f"{v:.6g}"))
    return 0
