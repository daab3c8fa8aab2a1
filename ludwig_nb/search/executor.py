"""How a search's trials are scheduled and run: the executor protocol, and what it may ask.

``executor: {type: local}`` (the default) is :class:`~ludwig_nb.search.local.LocalExecutor`:
Optuna in this kernel. ``executor: {type: ray}`` is
:class:`~ludwig_nb.search.tune.TuneExecutor`: one Ray Tune experiment. An executor drives the
search through :class:`DrivenSearch`, the search's small public API for it (the
:class:`~ludwig_nb.search.handle.Search` handle implements it), and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ludwig_nb.search.trial import TrialRecord

if TYPE_CHECKING:
    from ludwig_nb.config import Config
    from ludwig_nb.engines.base import Engine
    from ludwig_nb.runs.run import Run
    from ludwig_nb.search.space import SearchSpace

__all__ = ["DrivenSearch", "Executor", "OnEvaluation"]

#: what an executor hears at each evaluation of a running trial: (record, number, value)
OnEvaluation = Callable[[TrialRecord, int, float], None]


class DrivenSearch(Protocol):
    """A search as its executor drives it (the :class:`~ludwig_nb.search.handle.Search`).

    Attributes: its ``name``, ``directory``, rendered ``section``, ``space``, ``goal``,
    ``metric_path`` (split, feature, metric), ``total`` trials, ``concurrency`` (trials at
    once) and ``engine`` (what trains the trials, a name).
    """

    name: str
    directory: Path
    section: dict[str, Any]
    space: SearchSpace
    goal: str
    metric_path: tuple[str, str, str]
    total: int
    concurrency: int
    engine: str

    @property
    def rendered(self) -> dict[str, Any] | None:
        """The rendered config."""
        ...

    @property
    def dataset(self) -> object:
        """What every trial trains on."""
        ...

    @property
    def train_options(self) -> dict[str, object]:
        """A copy of every trial's ``train()`` options (device, random_seed, threads)."""
        ...

    @property
    def seed(self) -> int | None:
        """The search algorithm's seed."""
        ...

    @property
    def max_epochs(self) -> int:
        """Epochs of a full trial."""
        ...

    @property
    def is_grid(self) -> bool:
        """Whether the search walks a grid."""
        ...

    @property
    def is_stopping(self) -> bool:
        """Whether the search was asked to stop: start no trial, end when none runs."""
        ...

    @property
    def is_paused(self) -> bool:
        """Whether the search is paused: start no trial."""
        ...

    @property
    def counted(self) -> int:
        """Trials that ended for good."""
        ...

    def records(self) -> list[TrialRecord]:
        """Every trial, by number."""
        ...

    def over_budget(self) -> bool:
        """Whether ``time_budget_s`` is spent."""
        ...

    def spend_budget(self) -> None:
        """Note the spent budget and stop the search (its running trials too)."""
        ...

    def set_slots(self, slots: int) -> None:
        """How many trials the executor found room for at once."""
        ...

    def take_unfinished(self) -> list[TrialRecord]:
        """Remove the trials that did not end for good from the table (they rerun first)."""
        ...

    def new_trial(self, params: dict[str, object]) -> TrialRecord:
        """The next trial, queued, in the table and the journal."""
        ...

    def train_trial(
        self,
        record: TrialRecord,
        engine: str | Engine,
        options: dict[str, Any],
        *,
        memory_limit: float | None = None,
        on_evaluation: OnEvaluation | None = None,
    ) -> Run | None:
        """Start the trial's run (None: its config was refused, ``record.error`` says why)."""
        ...

    def prune(self, record: TrialRecord) -> None:
        """End a running trial as ``pruned`` (its run stops)."""
        ...

    def finish_trial(self, record: TrialRecord, state: str) -> None:
        """The trial ended in ``state``."""
        ...


class Executor(Protocol):
    """Schedules and runs a search's trials."""

    name: str  # the ``executor.type`` it runs: "local" or "ray"

    @property
    def auto_concurrency(self) -> int:
        """Trials at once for ``max_concurrent_trials: auto`` (before the executor finds more)."""
        ...

    def check(self, config: Config, engine: str) -> Engine:
        """Refuse, on the caller's thread, what the trials cannot train here.

        Args:
            config: a trial's config less its parameters: the search's without its ``hyperopt``
                section (``config.hyperopt.trial_base``), positions kept.
            engine: the engine the trials train on (a name, as ``train()`` takes).

        Returns:
            The engine whose plan the trials follow (the search's cost model plans with it).

        Raises:
            ConfigError: what the trials cannot train of ``config`` (located).
            EngineUnavailable: what to install.
        """
        ...

    def run(self, search: DrivenSearch) -> None:
        """Run the search's remaining trials; blocks until they are done or the search stops."""
        ...
