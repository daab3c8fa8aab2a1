"""Hyperparameter search: a Ludwig ``hyperopt:`` section searched trial by trial.

The layer above ``runs``: every trial is an ordinary run. :func:`hyperopt` checks and starts
a search and returns its :class:`Search` handle (handle.py); an executor schedules the trials
(executor.py: Optuna in this kernel, local.py; Ray Tune, tune.py); the journal (journal.py)
makes a search resumable; spaces (space.py), the cost model (cost.py, eta.py) and the GPU
packing of trials (gpus.py) serve them. Importing it loads neither Optuna nor Ray.
"""

from __future__ import annotations

from ludwig_nb.search.api import SEARCH_CONFIG_FILE, hyperopt
from ludwig_nb.search.handle import Search
from ludwig_nb.search.journal import JOURNAL_FILE
from ludwig_nb.search.statistics import STATISTICS_FILE
from ludwig_nb.search.trial import STATES, TrialRecord

__all__ = [
    "JOURNAL_FILE",
    "SEARCH_CONFIG_FILE",
    "STATES",
    "STATISTICS_FILE",
    "Search",
    "TrialRecord",
    "hyperopt",
]
