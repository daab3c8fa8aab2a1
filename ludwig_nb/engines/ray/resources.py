"""What a Ray run's workers need, against what the Ray it runs on can give.

Ray Train places its workers only when every one of them fits; one that never can (``use_gpu:
true`` where there is no GPU, 4 workers of 1 CPU on a 2-core machine, a custom resource no node
has) makes it wait forever, silently, in "preprocessing". So the need is checked before the run
starts: against this machine when the run will start a local Ray (located at the config's
line, from ``Engine.check``), against the cluster's totals once connected (a cluster can grow:
what is missing there is waited for, up to :data:`PLACEMENT_TIMEOUT_S`, and then said).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ludwig_nb.engines.ray.backend import RayBackend

__all__ = [
    "PLACEMENT_TIMEOUT_S",
    "local_resources",
    "shortfall",
    "worker_needs",
]

#: seconds the driver waits for Ray to place the workers of a run whose resources the cluster
#: does not have free before it gives up and says what is missing
PLACEMENT_TIMEOUT_S = 300.0


def worker_needs(backend: RayBackend) -> dict[str, float]:
    """What one worker asks Ray for (Ray Train's defaults: 1 CPU, and 1 GPU with use_gpu)."""
    needs = {"CPU": 1.0, **({"GPU": 1.0} if backend.use_gpu else {})}
    needs.update({str(k): float(v) for k, v in backend.resources_per_worker.items()})
    return {k: v for k, v in needs.items() if v > 0}


def local_resources() -> dict[str, float]:
    """What a local Ray started here would have: this machine's CPUs and NVIDIA GPUs."""
    return {"CPU": float(os.cpu_count() or 1), "GPU": float(_gpu_count())}


def _gpu_count() -> int:
    """The NVIDIA GPUs NVML sees (``CUDA_VISIBLE_DEVICES`` narrows them, as Ray reads it)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip() and d.strip() != "-1"])
    from ludwig_nb.gpu import kernel_sampler

    source = kernel_sampler(start=False).gpu_source
    if source is None or not source.available:
        return 0  # no driver: no GPU Ray could use either
    try:
        return len({g.index for g in source.sample() if g.mig_index is None})
    except Exception:  # a driver that fails to read: Ray would not see its GPUs either
        return 0


def shortfall(
    backend: RayBackend, have: Mapping[str, float], where: str
) -> tuple[tuple[str, ...], str] | None:
    """Why ``backend``'s workers can never all be placed on ``have``, or None when they can.

    Args:
        backend: the run's backend (workers and what each needs).
        have: the resources of the Ray (``ray.cluster_resources()``, or :func:`local_resources`).
        where: how to name that Ray in the message ("this machine", "the Ray cluster").

    Returns:
        The config path of the setting that asks too much, and one sentence saying what it
        asks and what ``where`` has.
    """
    needs = worker_needs(backend)
    workers = backend.world_size
    for name, each in needs.items():
        total = float(have.get(name, 0.0))
        if each * workers <= total + 1e-9:
            continue
        asked = f"{workers} worker{'s' if workers != 1 else ''} x {each:g} {name}"
        return _setting(name, backend), (
            f"{asked} need {each * workers:g} {name}, and {where} has {total:g}: "
            "Ray would wait for them forever"
        )
    return None


def _setting(name: str, backend: RayBackend) -> tuple[str, ...]:
    if name in backend.resources_per_worker:
        return ("backend", "trainer", "resources_per_worker", name)
    if name == "GPU":
        return ("backend", "trainer", "use_gpu")
    return ("backend", "trainer", "num_workers")
