"""``ludwig-nb``: the same configs, headless.

    ludwig-nb train --config c.yaml --dataset d.csv [--output-directory DIR]
    ludwig-nb train --demo churn [--engine auto|builtin|ludwig|ray]
    ludwig-nb evaluate --model DIR --dataset d.csv
    ludwig-nb predict --model DIR --dataset d.csv [--output predictions.csv]
    ludwig-nb compare RUN_DIR RUN_DIR... [--json]
    ludwig-nb hyperopt --config c.yaml --dataset d.csv [--name NAME] (config with hyperopt:)
    ludwig-nb kernel install [--user | --sys-prefix | --prefix DIR] [--name ludwig_nb]

Config and data mistakes print one located message and exit with status 2; a failed
run exits with 1. Ctrl-C stops the run gracefully (its model and best checkpoint stay).

The package: the parser (parser.py), the entry point and its error exits (app.py), one module
per command group (train.py, model.py for evaluate and predict, compare.py, hyperopt.py,
kernel.py). A run's progress on the terminal is a view of the run: ``ui/terminal.py``.
"""

from __future__ import annotations

from ludwig_nb.cli.app import entry, main

__all__ = ["entry", "main"]
