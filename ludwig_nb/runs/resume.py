"""What a run directory says about the run to resume: its config, its dataset and its name.

A run directory holds the rendered config that ran (``config.yaml``), names its dataset in
``description.json`` (written as the run starts, as Ludwig writes it, and again at the end)
and its name in ``status.json``; so ``train(resume_from=DIR)`` (``ludwig-nb train
--resume-from DIR``) needs nothing else, and the resumed run keeps its name.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from ludwig_nb.core.ludwig_results import DESCRIPTION_FILE
from ludwig_nb.store import rundir

__all__ = ["ResumedRun", "recorded_dataset", "resumed_run"]


@dataclasses.dataclass(frozen=True)
class ResumedRun:
    """A run directory's own account of its run.

    ``config``: the YAML text of its ``config.yaml`` (None when it has none); ``dataset``: the
    path (or ``"demo:NAME"``) it trained on, None when it trained on an in-memory table or
    does not say; ``name``: its name, None when its status does not say.
    """

    config: str | None
    dataset: str | None
    name: str | None


def resumed_run(directory: str | os.PathLike[str]) -> ResumedRun:
    """Read the run directory ``directory`` (see the module doc); what it lacks is None."""
    path = Path(directory)
    try:
        text: str | None = (path / rundir.CONFIG_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None
    described = rundir.read_json(path / DESCRIPTION_FILE) or {}
    dataset = described.get("dataset")
    status = rundir.read_json(path / rundir.STATUS_FILE) or {}
    name = status.get("name")
    return ResumedRun(
        config=text,
        dataset=dataset if isinstance(dataset, str) and dataset else None,
        name=name if isinstance(name, str) and name else None,
    )


def recorded_dataset(dataset: object) -> object:
    """``dataset`` as a run directory records it: a file path made absolute, else unchanged.

    A relative path would name another file once the directory is resumed from elsewhere;
    ``"demo:NAME"``, a dict of splits and a table are kept as they are.
    """
    if isinstance(dataset, os.PathLike):
        dataset = os.fspath(dataset)
    if isinstance(dataset, str) and not dataset.startswith("demo:") and Path(dataset).exists():
        return str(Path(dataset).resolve())
    return dataset
