"""The ``Engine`` protocol: the contract a training backend owns.

An engine says what it can run (:meth:`Engine.check`, on the caller's thread, raising the
located ``UnsupportedByEngine``), how it plans a run (:meth:`Engine.plan`, for pre-flight and
the ETA's schedule), what it needs of the data before its thread starts
(:meth:`Engine.prepare_data`), how it trains (:meth:`Engine.fit`) and how its saved models
load (:meth:`Engine.load`, chosen by the manifest in the model folder, see manifest.py).

``fit`` gets a validated, fully rendered config and the dataset, calls ``emit`` for every
event (core/events.py), and checks ``control`` at every step boundary
(``control.checkpoint()`` raises ``StopRequested``; ``control.wait_while_paused(...)``
blocks while paused). It never touches a widget and never prints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ludwig_nb.core.control import Control
from ludwig_nb.core.events import Event, ScheduleInfo

if TYPE_CHECKING:
    from ludwig_nb.config import Config

__all__ = ["Emit", "Engine", "EngineUnavailable", "TrainJob", "TrainedModel"]

Emit = Callable[[Event], None]


class EngineUnavailable(RuntimeError):
    """The engine cannot run in this environment (e.g. Ludwig is not installed).

    The message says what to install.
    """


@dataclasses.dataclass
class TrainJob:
    """Everything one training run needs.

    ``config``: the fully rendered Ludwig config (``Config.to_dict()``).
    ``dataset``: what the engine's ``prepare_data`` returned (a DataFrame, a path, or
    ``{"training": ..., "validation": ..., "test": ...}``).
    ``run_dir``: where checkpoints/ and model/ go. ``resume_from``: a run directory whose
    ``checkpoints/`` to continue from. ``device``: "cpu", "cuda", "cuda:1" or None (auto).
    ``clock``: wall-clock seconds (``time.time``), injectable for tests. ``seed``: the
    random seed (Ludwig's ``random_seed``; None: 42). ``threads``: CPU threads for the
    engine's torch math (None: the engine's default, leaving a core for the kernel).
    """

    config: dict[str, Any]
    dataset: Any
    run_dir: Path
    run_id: str
    name: str
    device: str | None = None
    resume_from: Path | None = None
    clock: Callable[[], float] | None = None
    seed: int | None = None
    threads: int | None = None
    profile_steps: int = 0  # > 0: torch.profiler records this many steps (issue 16)


class TrainedModel(Protocol):
    """A trained model: predict, evaluate and save, in any process once loaded."""

    def predict(self, data: Any) -> Any:  # -> pandas.DataFrame
        """Predictions for ``data`` (a DataFrame or a file path), one row per input row."""

    def evaluate(self, data: Any) -> dict[str, dict[str, float]]:
        """Metrics on labelled ``data``: ``{feature: {metric: value}}``."""

    def save(self, path: str | Path) -> Path:
        """Save the model under ``path`` and return its folder.

        The folder loads with :func:`ludwig_nb.load_model` in any process.
        """


class Engine(Protocol):
    """A training backend; see the module docstring for the contract."""

    name: str

    def check(self, config: Config) -> None:
        """Reject what this engine cannot run of a valid ``config``.

        Raise ``UnsupportedByEngine`` (located at the config's lines) for whatever part of the valid
        ``config`` this engine cannot run, and ``EngineUnavailable`` when the engine cannot run here
        at all. Cheap: no heavy import, on the caller's thread.
        """
        ...

    def prepare_data(self, config: Mapping[str, Any], dataset: Any) -> Any:
        """Check ``dataset`` against ``config`` and return what ``fit`` gets.

        Check ``dataset`` against the rendered ``config`` before the thread starts (``DataError``
        for a missing file or column) and return what ``fit`` gets as ``TrainJob.dataset``. Whatever
        can wait for the thread should.
        """
        ...

    def plan(self, config: Mapping[str, Any], rows: int) -> ScheduleInfo:
        """The schedule a run of ``config`` over ``rows`` training rows follows.

        The schedule a run of ``config`` over ``rows`` training rows follows (the plan pre-flight
        costs; without early stopping).
        """
        ...

    def warm_up(self) -> None:
        """Pay one-off costs (imports) so that a following pilot measures the run."""
        ...

    def fit(self, job: TrainJob, emit: Emit, control: Control) -> TrainedModel | None:
        """Train; return the final model.

        ``StopRequested`` is handled inside (a stopped run still returns its model, or None when it
        stopped before a model existed); any other exception propagates to the run layer.
        """
        ...

    def load(self, folder: Path, manifest: Mapping[str, Any]) -> TrainedModel:
        """Load a model this engine saved in ``folder`` (``manifest``: its manifest file)."""
        ...
