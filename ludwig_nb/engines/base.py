"""The ``Engine`` protocol: what a training backend must offer the run layer.

An engine gets a validated, fully rendered config and the dataset, calls ``emit`` for every
event (core/events.py), and checks ``control`` at every step boundary
(``control.checkpoint()`` raises ``StopRequested``; ``control.wait_while_paused(...)``
blocks while paused). It never touches a widget and never prints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ludwig_nb.core.control import RunControl
from ludwig_nb.core.events import Event

__all__ = ["Emit", "Engine", "TrainJob", "TrainedModel"]

Emit = Callable[[Event], None]


@dataclasses.dataclass
class TrainJob:
    """Everything one training run needs.

    ``config``: the fully rendered Ludwig config (``Config.to_dict()``).
    ``dataset``: a DataFrame, a path, or ``{"training": ..., "validation": ..., "test": ...}``.
    ``run_dir``: where checkpoints/ and model/ go. ``resume_from``: a run directory whose
    ``checkpoints/`` to continue from. ``device``: "cpu", "cuda", "cuda:1" or None (auto).
    ``clock``: wall-clock seconds (``time.time``), injectable for tests. ``seed``: the
    random seed (Ludwig's ``random_seed``; None: 42). ``threads``: CPU threads for the
    engine's math (None: the engine's default, leaving a core for the kernel).
    """

    config: dict[str, Any]
    dataset: Any
    run_dir: Path
    run_id: str
    name: str
    device: str | None = None
    resume_from: Path | None = None
    clock: Callable[[], float] | None = None
    poll: Callable[[], None] | None = None  # called at step boundaries (control file reader)
    seed: int | None = None
    threads: int | None = None
    profile_steps: int = 0  # > 0: torch.profiler records this many steps (issue 16)


class TrainedModel(Protocol):
    """A trained model: predict, evaluate and save, in any process once loaded."""

    def predict(self, data: Any) -> Any: ...  # -> pandas.DataFrame

    def evaluate(self, data: Any) -> dict[str, dict[str, float]]: ...

    def save(self, path: str | Path) -> Path: ...


class Engine(Protocol):
    name: str

    def fit(self, job: TrainJob, emit: Emit, control: RunControl) -> TrainedModel:
        """Train; return the final model. ``StopRequested`` is handled inside (a stopped run
        still returns its model); any other exception propagates to the run layer."""
        ...
