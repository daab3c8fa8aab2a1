"""The ``backend:`` section of a config run by ``engine: ray``.

Ludwig's shape, checked and read into a :class:`RayBackend`.

```yaml
backend:
  type: ray                  # local (default) | ray
  address: null              # null: start a local Ray; "auto" or "host:port": join a cluster
  storage_path: null         # checkpoints; shared storage when the cluster has >1 node
  trainer: {strategy: ddp, num_workers: 2, use_gpu: false, resources_per_worker: {CPU: 1},
            placement_strategy: PACK, max_failures: 0}
```
``num_workers`` is at least 1: without Ray, the built-in engine runs the same loop.
Stdlib only: the check runs on the caller's thread before anything heavy is imported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ludwig_nb.config.errors import UnsupportedByEngine
from ludwig_nb.config.schema.fields import Ctx, suggest
from ludwig_nb.config.yaml_positions import KeyPath

__all__ = [
    "DEFAULT_WORKER_BATCH_SIZE",
    "PLACEMENT_STRATEGIES",
    "RayBackend",
    "check_backend",
    "worker_config",
]

PLACEMENT_STRATEGIES = ("PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD")
#: ``batch_size: auto`` on Ray: every rank must take the same batch size, so the per-rank
#: probe of the built-in engine is replaced by Ludwig's CPU default, per worker.
DEFAULT_WORKER_BATCH_SIZE = 128
_TOP_KEYS = ("type", "address", "storage_path", "trainer", "cache_dir", "processor", "loader")
_TRAINER_KEYS = (
    "strategy",
    "num_workers",
    "use_gpu",
    "resources_per_worker",
    "placement_strategy",
    "max_failures",
)


@dataclasses.dataclass(frozen=True)
class RayBackend:
    """What ``backend:`` asks for."""

    num_workers: int = 1
    use_gpu: bool = False
    resources_per_worker: Mapping[str, float] = dataclasses.field(default_factory=dict)
    placement_strategy: str = "PACK"
    max_failures: int = 0
    address: str | None = None
    storage_path: str | None = None

    @property
    def world_size(self) -> int:
        """The number of training ranks."""
        return max(1, self.num_workers)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> RayBackend:
        """Read a checked config's ``backend`` (see :func:`check_backend`)."""
        backend = dict(config.get("backend") or {})
        trainer = dict(backend.get("trainer") or {})
        return cls(
            num_workers=int(trainer.get("num_workers", 1)),
            use_gpu=bool(trainer.get("use_gpu", False)),
            resources_per_worker={
                str(k): float(v) for k, v in (trainer.get("resources_per_worker") or {}).items()
            },
            placement_strategy=str(trainer.get("placement_strategy") or "PACK"),
            max_failures=int(trainer.get("max_failures") or 0),
            address=backend.get("address"),
            storage_path=backend.get("storage_path"),
        )


def _problem(ctx: Ctx, path: KeyPath, message: str, **extra: Any) -> None:
    ctx.problem(path, message, kind=UnsupportedByEngine, engine="ray", **extra)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _unknown(section: Mapping[str, Any], allowed: tuple[str, ...], path: KeyPath, ctx: Ctx) -> None:
    for key in section:
        if key not in allowed:
            near = suggest(str(key), allowed)
            _problem(
                ctx,
                (*path, key),
                f"unknown key '{key}' in {'.'.join(map(str, path))}",
                key=True,
                hint=f"did you mean '{near}'?" if near else f"allowed: {', '.join(allowed)}",
            )


def check_backend(config: Mapping[str, Any], ctx: Ctx) -> None:
    """Record, in ``ctx``, every problem of ``config``'s ``backend`` for ``engine: ray``."""
    backend = config.get("backend")
    if not isinstance(backend, Mapping) or backend.get("type") != "ray":
        found = backend.get("type") if isinstance(backend, Mapping) else None
        _problem(
            ctx,
            ("backend", "type") if found else ("backend",),
            f"engine: ray runs configs with `backend: {{type: ray}}`, this one has "
            f"{'backend type ' + repr(found) if found else 'no backend section'}",
            hint="add `backend: {type: ray, trainer: {num_workers: 2}}`, or use engine: builtin",
        )
        return
    _unknown(backend, _TOP_KEYS, ("backend",), ctx)
    for key in ("address", "storage_path"):
        value = backend.get(key)
        if value is not None and not (isinstance(value, str) and value):
            _problem(
                ctx,
                ("backend", key),
                f"backend.{key} must be a string or null, not {value!r}",
                hint='e.g. "auto" or "10.0.0.1:6379"'
                if key == "address"
                else "a directory every node can write (NFS, or a local path on one machine)",
            )
    trainer = backend.get("trainer") or {}
    if not isinstance(trainer, Mapping):
        _problem(
            ctx,
            ("backend", "trainer"),
            "backend.trainer must be a mapping",
            hint="e.g. `trainer: {num_workers: 2, use_gpu: false}`",
        )
        return
    _check_trainer(trainer, ctx)


def _check_trainer(trainer: Mapping[str, Any], ctx: Ctx) -> None:
    path: KeyPath = ("backend", "trainer")
    _unknown(trainer, _TRAINER_KEYS, path, ctx)
    strategy = trainer.get("strategy", "ddp")
    if strategy != "ddp":
        _problem(
            ctx,
            (*path, "strategy"),
            f"strategy {strategy!r} is not run by engine: ray",
            hint="engine: ray trains with strategy: ddp (DistributedDataParallel); "
            "Ludwig's horovod/deepspeed/fsdp strategies are not supported",
        )
    workers = trainer.get("num_workers", 1)
    if not _is_int(workers) or workers < 1:
        _problem(
            ctx,
            (*path, "num_workers"),
            f"num_workers must be an integer >= 1 (the Ray Train workers), not {workers!r}",
            hint="to train in this process without Ray, leave the backend out (engine: "
            "builtin runs the same loop)",
        )
    if not isinstance(trainer.get("use_gpu", False), bool):
        _problem(
            ctx,
            (*path, "use_gpu"),
            f"use_gpu must be true or false, not {trainer.get('use_gpu')!r}",
        )
    failures = trainer.get("max_failures", 0)
    if not _is_int(failures) or failures < 0:
        _problem(
            ctx,
            (*path, "max_failures"),
            f"max_failures must be an integer >= 0, not {failures!r}",
            hint="how often Ray Train restarts the workers from the "
            "last checkpoint after a worker dies (0: fail the run)",
        )
    placement = trainer.get("placement_strategy", "PACK")
    if placement not in PLACEMENT_STRATEGIES:
        _problem(
            ctx,
            (*path, "placement_strategy"),
            f"placement_strategy {placement!r} is not one of {', '.join(PLACEMENT_STRATEGIES)}",
        )
    resources = trainer.get("resources_per_worker") or {}
    if not isinstance(resources, Mapping):
        _problem(
            ctx,
            (*path, "resources_per_worker"),
            "resources_per_worker must be a mapping of resource name to amount",
            hint="e.g. {CPU: 1, GPU: 1}",
        )
        return
    for name, amount in resources.items():
        if isinstance(amount, bool) or not isinstance(amount, int | float) or amount < 0:
            _problem(
                ctx,
                (*path, "resources_per_worker", name),
                f"resources_per_worker.{name} must be a number >= 0, not {amount!r}",
            )


def worker_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The config the workers train.

    ``batch_size: auto`` becomes 128 per worker (every rank must take the same batch size; the
    built-in engine's probe would differ per rank).
    """
    out = dict(config)
    trainer = dict(out.get("trainer") or {})
    if trainer.get("batch_size") in (None, "auto"):
        trainer["batch_size"] = DEFAULT_WORKER_BATCH_SIZE
    out["trainer"] = trainer
    return out
