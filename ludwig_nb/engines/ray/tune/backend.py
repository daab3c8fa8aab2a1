"""``TuneBackend``: the ``ray`` engine's :class:`~ludwig_nb.engines.base.SearchBackend`.

What the search's ``executor: {type: ray}`` asks of Ray Tune, through the engine registry
(``get_engine("ray").search_backend()``). No Ray import until :meth:`TuneBackend.run`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludwig_nb.engines.ray.tune.mirror import TuneTrialEngine
from ludwig_nb.engines.ray.tune.space import decode
from ludwig_nb.engines.ray.tune.spec import optuna_missing, tune_missing
from ludwig_nb.engines.ray.tune.storage import trial_folder
from ludwig_nb.engines.search_backend import TuneHooks, TuneSpec

if TYPE_CHECKING:
    from ludwig_nb.config import Config
    from ludwig_nb.engines.builtin.engine import BuiltinEngine

__all__ = ["TuneBackend"]


class TuneBackend:
    """A search's trials as the trials of one Ray Tune experiment (see the package docstring)."""

    def missing(self, search_alg: str) -> str | None:
        """Why Ray Tune (and optuna for ``search_alg: optuna``) cannot run here, or None."""
        return tune_missing() or (optuna_missing() if search_alg == "optuna" else None)

    def check(self, config: Config) -> BuiltinEngine:
        """The built-in engine's check; returns that engine: each trial trains its loop."""
        from ludwig_nb.engines.builtin.engine import BuiltinEngine

        engine = BuiltinEngine()
        engine.check(config)
        return engine

    def trial_engine(self, channel: str, tune_id: str, storage: Path | None) -> TuneTrialEngine:
        """The engine of the trial's mirror run in the notebook."""
        return TuneTrialEngine(channel, tune_id, storage=storage)

    def decode(
        self, parameters: dict[str, dict[str, Any]], values: dict[str, Any]
    ) -> dict[str, Any]:
        """Tune's sampled values -> the values written into the trial's config."""
        return decode(parameters, values)

    def trial_folder(self, storage: Path | None, run_dir: Path, run_id: str) -> Path:
        """Where the trial writes its run folder: on the storage, else the run directory."""
        return trial_folder(storage, run_dir, run_id)

    def run(self, spec: TuneSpec, hooks: TuneHooks) -> None:
        """Run the experiment on Ray Tune (blocks; ``RuntimeError`` when Tune fails)."""
        from ludwig_nb.engines.ray.tune.driver import run_tune

        run_tune(spec, hooks)
