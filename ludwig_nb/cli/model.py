"""``ludwig-nb evaluate`` and ``ludwig-nb predict``: a saved model on a dataset."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["csv_columns", "evaluate", "predict"]


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
    """Predictions of a saved model as CSV (on stdout, or ``--output``).

    One value per cell, as Ludwig writes its predictions: a column of probability arrays is
    left out where one ``<column>_<class>`` column per class holds the same numbers, and any
    other list is written as its values separated by spaces (never numpy's ``[0.99 0.01]``).
    """
    from ludwig_nb.runs import load_model

    predictions = csv_columns(load_model(args.model).predict(args.dataset))
    if args.output:
        predictions.to_csv(args.output, index=False)
        print(f"{len(predictions)} predictions -> {args.output}")
    else:
        predictions.to_csv(sys.stdout, index=False)
    return 0


def csv_columns(frame: Any) -> Any:
    """``frame`` (a pandas DataFrame) with one plain value per cell (see :func:`predict`)."""
    out = frame.copy()
    for column in list(out.columns):
        values = out[column]
        first = next((v for v in values if v is not None), None)
        if not hasattr(first, "__len__") or isinstance(first, str | bytes):
            continue
        if any(str(other).startswith(f"{column}_") for other in out.columns):
            out = out.drop(columns=column)  # one column per class holds these already
        else:
            out[column] = [" ".join(str(x) for x in v) if v is not None else "" for v in values]
    return out
