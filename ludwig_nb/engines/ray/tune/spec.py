"""The Ray side of a Tune experiment's contract with the search.

The picklable :class:`HooksRef` Tune carries instead of the search's hooks, what the ``ray``
executor runs for each Ludwig name, and the checks for the extras it needs. The experiment
(``TuneSpec``) and the hooks (``TuneHooks``) are the engines' contract with the search
(engines/search_backend.py). No Ray import.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from ludwig_nb.engines.search_backend import TuneHooks

__all__ = [
    "NAMESPACE",
    "TUNE_SCHEDULERS",
    "TUNE_SEARCH_ALGS",
    "HooksRef",
    "TuneTrialFailed",
    "optuna_missing",
    "register_hooks",
    "tune_missing",
    "unregister_hooks",
]

#: the Ray namespace of the search's channel actor
NAMESPACE = "ludwig_nb"
#: Ludwig ``search_alg.type`` -> what the ray executor runs
TUNE_SEARCH_ALGS = {
    "random": "BasicVariantGenerator",
    "variant_generator": "BasicVariantGenerator",
    "optuna": "OptunaSearch (TPE)",
}
#: Ludwig ``scheduler.type`` -> the Tune scheduler
TUNE_SCHEDULERS = {
    "fifo": "FIFOScheduler",
    "asha": "AsyncHyperBandScheduler",
    "async_hyperband": "AsyncHyperBandScheduler",
    "hyperband": "AsyncHyperBandScheduler (brackets=3)",
    "hb_bohb": "AsyncHyperBandScheduler (brackets=3)",
    "median_stopping_rule": "MedianStoppingRule",
    "median": "MedianStoppingRule",
}


class TuneTrialFailed(RuntimeError):
    """A Tune trial raised or its actor died; the message says which and why."""


def tune_missing() -> str | None:
    """Why Ray Tune cannot run here (one line naming the extra), or None. No import."""
    if importlib.util.find_spec("ray") is None:
        return 'executor type ray needs Ray Tune: pip install "ludwig_nb[ray]"'
    return None


def optuna_missing() -> str | None:
    """Why ``search_alg: optuna`` cannot run on Ray Tune here, or None. No import."""
    if importlib.util.find_spec("optuna") is None:
        return (
            "search_alg optuna on executor type ray uses Ray Tune's OptunaSearch, which "
            'needs optuna beside Ray: pip install "ludwig_nb[ray,hyperopt]"'
        )
    return None


#: the hooks of the experiments running in this process, by key (see :class:`HooksRef`)
_HOOKS: dict[str, TuneHooks] = {}


def register_hooks(key: str, hooks: TuneHooks) -> HooksRef:
    """Register ``hooks`` under ``key`` for this process; returns the stand-in Tune carries."""
    _HOOKS[key] = hooks
    return HooksRef(key)


def unregister_hooks(key: str) -> None:
    """Forget the hooks registered under ``key`` (the experiment is over)."""
    _HOOKS.pop(key, None)


class HooksRef:
    """A picklable stand-in for a search's hooks.

    Tune pickles its callbacks, stopper and scheduler with the experiment's state, and the
    search (threads, locks) does not pickle.

    Args:
        key: the key of the hooks in this process's registry.
    """

    def __init__(self, key: str) -> None:
        self.key = key

    def __getattr__(self, name: str) -> Any:
        if name == "key" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(_HOOKS[self.key], name)
