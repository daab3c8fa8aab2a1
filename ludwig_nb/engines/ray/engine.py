"""``RayEngine``: the built-in engine's loop on Ray Train workers, behind the engine contract.

``check`` accepts what the built-in engine runs plus a ``backend: {type: ray}`` section
(backend.py); ``fit`` starts (or joins) Ray lazily, launches a ``TorchTrainer`` whose
per-worker loop is the built-in training loop (worker.py), and streams rank 0's events into
the run's ``emit`` through the per-run channel (channel.py, driver.py). Models are the
built-in engine's (``model/`` loads with ``engine: builtin``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludwig_nb.core.control import Control
from ludwig_nb.core.events import ScheduleInfo
from ludwig_nb.engines.base import Emit, Engine, EngineUnavailable, TrainJob
from ludwig_nb.engines.devices import DeviceFacts, TorchDeviceFacts
from ludwig_nb.engines.ray.backend import worker_config

if TYPE_CHECKING:
    from ludwig_nb.config import Config
    from ludwig_nb.engines.builtin.model_io import BuiltinModel
    from ludwig_nb.engines.ray.tune.backend import TuneBackend

__all__ = ["RAY_INSTALL_HINT", "RayEngine", "ray_missing"]

RAY_INSTALL_HINT = 'pip install "ludwig_nb[ray]"'


def ray_missing() -> str | None:
    """Why Ray cannot run here (one line naming the extra), or None. Cheap: no import."""
    if importlib.util.find_spec("ray") is None:
        return f"engine: ray needs Ray Train: {RAY_INSTALL_HINT}"
    return None


class RayEngine(Engine):
    """Trains built-in ECD configs data-parallel on Ray Train (``backend: {type: ray}``)."""

    name = "ray"
    #: the run's GPUs are read on the workers' nodes and fed back (runs/monitoring.py)
    gpus_on_workers = True

    def check(self, config: Config) -> None:
        """Reject a backend section or model part this engine cannot run.

        ``UnsupportedByEngine`` (located) for a backend section this engine cannot run or a model
        part the built-in engine lacks; ``EngineUnavailable`` without Ray.
        """
        from ludwig_nb.config.errors import ConfigError
        from ludwig_nb.config.schema.fields import Ctx
        from ludwig_nb.engines.builtin.capabilities import check_engine_support
        from ludwig_nb.engines.ray.backend import check_backend

        rendered = config.to_dict()
        ctx = Ctx(config.positions)
        check_backend(rendered, ctx)
        check_engine_support({**rendered, "backend": None}, ctx)
        if ctx.problems:
            ordered = sorted(ctx.problems, key=lambda p: (p.line is None, p.line or 0))
            raise ConfigError.collect(ordered)
        missing = ray_missing()
        if missing is not None:
            raise EngineUnavailable(missing)

    def prepare_data(self, config: Mapping[str, Any], dataset: Any) -> Any:
        """Check the data; a path is read by the workers themselves.

        A path: its columns are checked from the header (``DataError``) and the workers read
        it themselves; a DataFrame: the built-in engine's checks, then it travels to the
        workers through Ray's object store (data.py says why).
        """
        from ludwig_nb.engines.ray.data import prepare

        return prepare(config, dataset)

    def plan(self, config: Mapping[str, Any], rows: int) -> ScheduleInfo:
        """The schedule of one rank.

        ``rows // num_workers`` rows at the per-worker batch size (``auto``: 128 per worker).
        """
        from ludwig_nb.engines.builtin.distributed import shard_rows
        from ludwig_nb.engines.builtin.schedule import plan_training
        from ludwig_nb.engines.ray.backend import RayBackend

        backend = RayBackend.from_config(config)
        trainer = dict(worker_config(config).get("trainer") or {})
        rows = shard_rows(rows, backend.world_size)
        return plan_training(trainer, rows, int(trainer["batch_size"])).info()

    def warm_up(self) -> None:
        """Import Ray Train and torch (the 3-4 s of a first use)."""
        import ray.train.torch  # noqa: F401

        from ludwig_nb.engines.builtin.engine import BuiltinEngine

        BuiltinEngine().warm_up()

    def devices(self) -> DeviceFacts:
        """Torch's facts in this process (the workers' own GPUs come through ``gpu_feed``)."""
        return TorchDeviceFacts()

    def search_backend(self) -> TuneBackend:
        """Ray Tune: a search's ``executor: {type: ray}`` runs its trials as Tune trials."""
        from ludwig_nb.engines.ray.tune.backend import TuneBackend

        return TuneBackend()

    def fit(self, job: TrainJob, emit: Emit, control: Control) -> BuiltinModel:
        """Train on Ray Train; returns the model rank 0 saved.

        Raises ``WorkerFailed`` when a worker fails (its rank, host and error), ``RunKilled`` after
        a second Stop.
        """
        from ludwig_nb.engines.ray.driver import RayDriver

        model: BuiltinModel = RayDriver(job, emit, control).run()
        return model

    def load(self, folder: Path, manifest: Mapping[str, Any]) -> BuiltinModel:
        """Ray runs save built-in models; loads one (``FileNotFoundError``)."""
        from ludwig_nb.engines.builtin.model_io import load_model

        return load_model(folder / str(manifest.get("path") or "."))
