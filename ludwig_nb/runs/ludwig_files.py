"""Write Ludwig's result files into a run directory when the run ends.

``training_statistics.json`` (when the engine did not write it), ``test_statistics.json``
(when there is a test split) and ``description.json``, in Ludwig 0.11's shapes
(``core/ludwig_results.py``), so ``ludwig visualize`` reads a ludwig_nb run directory.
"""

from __future__ import annotations

import sys
from importlib import metadata
from typing import TYPE_CHECKING, Any

from ludwig_nb.core import ludwig_results as lr
from ludwig_nb.store.rundir import write_json_atomic

if TYPE_CHECKING:
    from ludwig_nb.engines.devices import DeviceFacts
    from ludwig_nb.runs.run import Run

__all__ = ["write_ludwig_files"]


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _compute(devices: DeviceFacts) -> dict[str, object]:
    """Ludwig's ``compute`` block: nodes, and the GPUs the run's framework sees, if any."""
    out: dict[str, object] = {"num_nodes": 1}
    gpus = devices.accelerators()
    if gpus:
        out["gpus_per_node"] = len(gpus)
        out["devices"] = {str(i): gpu for i, gpu in enumerate(gpus)}
    return out


def write_ludwig_files(run: Run, config: dict[str, Any], dataset: object, seed: int | None) -> None:
    """Write the three files from ``run``'s events (see the module doc)."""
    events = list(run.events)
    trainer = config.get("trainer") or {}
    training = run.directory / lr.TRAINING_STATISTICS_FILE
    if not training.exists():
        write_json_atomic(training, lr.training_statistics(events, trainer))
    test = lr.test_statistics(events)
    if test is not None:
        write_json_atomic(run.directory / lr.TEST_STATISTICS_FILE, test)
    versions = {
        "ludwig": _version("ludwig"),
        "ludwig_nb": _version("ludwig_nb"),
        "torch": _version("torch"),
    }
    described = lr.description(
        config,
        versions=versions,
        command=" ".join(sys.argv),
        random_seed=42 if seed is None else seed,
        dataset=dataset,
        compute=_compute(run.engine.devices()),
    )
    write_json_atomic(run.directory / lr.DESCRIPTION_FILE, described)
