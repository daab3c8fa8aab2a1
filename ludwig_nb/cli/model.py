"""``ludwig-nb evaluate`` and ``ludwig-nb predict``: a saved model on a dataset."""

from __future__ import annotations

import argparse
import json
import sys

__all__ = ["evaluate", "predict"]


def evaluate(args: argparse.Namespace) -> int:
    """Metrics of a saved model on a labelled dataset (a table, or ``--json``)."""
    from ludwig_nb.core.metrics_text import metrics_text_table
    from ludwig_nb.runs import load_model

    metrics = load_model(args.model).evaluate(args.dataset)
    if args.json:
        print(json.dumps(metrics, indent=1, default=float))
    else:
        print(metrics_text_table({str(args.dataset): metrics}))
    return 0


def predict(args: argparse.Namespace) -> int:
    """Predictions of a saved model as CSV (on stdout, or ``--output``)."""
    from ludwig_nb.runs import load_model

    predictions = load_model(args.model).predict(args.dataset)
    if args.output:
        predictions.to_csv(args.output, index=False)
        print(f"{len(predictions)} predictions -> {args.output}")
    else:
        predictions.to_csv(sys.stdout, index=False)
    return 0
