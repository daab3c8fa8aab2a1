"""``executor: {type: ray}``: a search's trials as Ray Tune trials, each the built-in loop.

:func:`run_tune` (driver.py) runs one Tune experiment on the driver (the search's thread in
the kernel):

* each trial is a function trainable whose body is the built-in engine's own training loop
  (``Training``, as on Ray Train workers), in its Tune trial actor (``cpu`` / ``gpu``
  resources per trial, fractions allowed); it reports the hyperopt metric to Tune with
  ``tune.report`` at each evaluation only, never per step (trial.py);
* as many trials run at once as ``max_concurrent_trials`` says, else as fit on the Ray
  (searchers.py: the limit is the search algorithm's own, which Tune honours for every
  kind of search algorithm);
* its events reach the notebook through one named async actor per search
  (:class:`TuneChannel`, channel.py, ``num_cpus=0``): the trial pushes batches (steps every
  0.2 s, anything else at once), the notebook's mirror run of the trial
  (:class:`TuneTrialEngine`, mirror.py, behind an ordinary ``Run``) long-polls them and
  forwards its Stop/Pause back. The actor, not Tune's driver callbacks, carries the curves:
  a callback sees only what ``tune.report`` sent, so live per-step curves and ETAs would
  need a report per step (DISTRIBUTED.md: ~2 s a step through Ray Train's report path);
* the scheduler (ASHA, median stopping, asynchronous HyperBand; schedulers.py) decides on
  those reports; each STOP ends the trial gracefully through the channel (its checkpoint
  written): before ``max_t`` as a prune, at ``max_t`` before its plan's end as a cut;
* with a storage path a trial writes its run folder there and the notebook brings its
  model home when it ends (storage.py);
* Ludwig's spaces travel as Tune domains (space.py); the search's hooks
  (``TuneHooks``, engines/search_backend.py, implemented by the search) create each trial's
  run directory and mirror run, and hear every prune, cut and end;
* the search reaches all this through :class:`TuneBackend` (backend.py), which
  ``RayEngine.search_backend()`` returns: it never imports this package.

Ray is started lazily (or joined: ``RAY_ADDRESS``, or a ``ray.init`` made before); it is
never shut down here and ``ray stop`` is never called. No module here imports Ray at
import time.
"""

from __future__ import annotations

from ludwig_nb.engines.ray.tune.backend import TuneBackend
from ludwig_nb.engines.ray.tune.channel import TuneChannel
from ludwig_nb.engines.ray.tune.driver import run_tune
from ludwig_nb.engines.ray.tune.mirror import TuneTrialEngine
from ludwig_nb.engines.ray.tune.space import decode, encode
from ludwig_nb.engines.ray.tune.spec import (
    TUNE_SCHEDULERS,
    TUNE_SEARCH_ALGS,
    TuneTrialFailed,
    optuna_missing,
    tune_missing,
)
from ludwig_nb.engines.ray.tune.storage import trial_folder

__all__ = [
    "TUNE_SCHEDULERS",
    "TUNE_SEARCH_ALGS",
    "TuneBackend",
    "TuneChannel",
    "TuneTrialEngine",
    "TuneTrialFailed",
    "decode",
    "encode",
    "optuna_missing",
    "run_tune",
    "trial_folder",
    "tune_missing",
]
