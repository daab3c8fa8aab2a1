"""The local executor: Optuna asks for each trial's parameters, trials train in this kernel.

The driver asks Optuna's study for parameters, starts each trial as an ordinary run on the
config's engine (up to ``max_concurrent_trials`` at once, sharing the CPU cores, or packed
onto GPUs by ``gpu_resources_per_trial``, gpus.py), reports the hyperopt metric of every
evaluation to the pruner on the trial's training thread, and stops a trial the pruner gives
up on (state ``pruned``; a trial that raised is ``failed``). A resumed search tells the study
its finished trials and reruns the unfinished ones first.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from ludwig_nb.search.executor import DrivenSearch
from ludwig_nb.search.gpus import GpuPacker, trial_memory_limit
from ludwig_nb.search.trial import TrialRecord, trial_end_state

if TYPE_CHECKING:
    from ludwig_nb.config import Config
    from ludwig_nb.engines.base import Engine

__all__ = ["LocalExecutor"]

_POLL_S = 0.05  # how often the driver looks at its trials' new events


class LocalExecutor:
    """Trials in this kernel, their parameters from Optuna.

    Args:
        packer: the GPUs the trials share (None: trials train where they would).
    """

    name = "local"

    def __init__(self, packer: GpuPacker | None = None) -> None:
        self.packer = packer

    @property
    def auto_concurrency(self) -> int:
        """Trials at once for ``max_concurrent_trials: auto``: what fits on the GPUs, else 1."""
        return self.packer.capacity if self.packer is not None else 1

    def check(self, config: Config, engine: str) -> Engine:
        """The trials' engine, checked (``engine``: a name; "auto": the config's engine).

        Raises ``ConfigError`` (located) or ``EngineUnavailable``, as ``train()`` would.
        """
        from ludwig_nb.engines.registry import select_engine

        return select_engine(engine, config)

    def run(self, search: DrivenSearch) -> None:
        """Run the search's remaining trials (blocks until they are done or it stops)."""
        import optuna

        from ludwig_nb.search.space import make_pruner, make_sampler

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        study = optuna.create_study(
            direction="maximize" if search.goal == "maximize" else "minimize",
            sampler=make_sampler(search.section["search_alg"], search.space, search.seed),
            pruner=make_pruner(search.section["executor"]["scheduler"], search.max_epochs),
        )
        _seed_study(search, study)
        live: dict[int, tuple[TrialRecord, object]] = {}  # number -> record, Optuna trial
        while True:
            self._reap(search, study, live)
            if search.is_stopping and not live:
                break
            counted = search.counted
            over_budget = search.over_budget()
            if over_budget and live and not search.is_stopping:
                search.spend_budget()  # as Ray Tune: the budget ends running trials too
            if self._can_start(search, len(live), counted, over_budget):
                self._launch(search, study, live)
                continue
            if not live and (counted >= search.total or over_budget):
                break
            time.sleep(_POLL_S)

    def _can_start(self, search: DrivenSearch, live: int, counted: int, over_budget: bool) -> bool:
        return (
            not search.is_stopping
            and not search.is_paused
            and not over_budget
            and live < search.concurrency
            and counted + live < search.total
            and (self.packer is None or self.packer.has_room())
        )

    def _launch(
        self, search: DrivenSearch, study: Any, live: dict[int, tuple[TrialRecord, object]]
    ) -> None:
        otrial = study.ask(search.space.distributions)
        record = search.new_trial(search.space.decode(otrial.params))
        options = search.train_options
        if options.get("threads") is None and search.concurrency > 1:  # share the cores
            options["threads"] = max(1, ((os.cpu_count() or 2) - 1) // search.concurrency)
        limit = None
        if self.packer is not None:
            from ludwig_nb.search import gpus

            index = self.packer.place()
            assert index is not None  # the loop starts a trial only when one fits
            record.gpu = (index, self.packer.share)
            options["device"] = gpus.device_name(index)
            limit = trial_memory_limit(self.packer.load(index))  # the GPU's packed shares
        run = search.train_trial(
            record,
            search.engine,
            options,
            memory_limit=limit,
            on_evaluation=lambda rec, step, value: _report(search, otrial, rec, step, value),
        )
        if run is None:
            self._finish(search, study, otrial, record, "failed")
            return
        live[record.number] = (record, otrial)

    def _reap(
        self, search: DrivenSearch, study: object, live: dict[int, tuple[TrialRecord, object]]
    ) -> None:
        for number, (record, otrial) in list(live.items()):
            run = record.run
            assert run is not None
            if run.is_done:
                state = record.state if record.state == "pruned" else trial_end_state(run)
                if state == "failed":
                    record.error = str(run.error) if run.error else run.status
                self._finish(search, study, otrial, record, state)
                del live[number]

    def _finish(
        self, search: DrivenSearch, study: object, otrial: object, record: TrialRecord, state: str
    ) -> None:
        if record.gpu is not None and self.packer is not None:
            self.packer.release(record.gpu[0])
        search.finish_trial(record, state)
        _tell(study, otrial, record, state)


def _report(
    search: DrivenSearch, otrial: Any, record: TrialRecord, step: int, value: float
) -> None:
    """Optuna's pruner decides at each evaluation, on the trial's thread, before its next step."""
    otrial.report(value, step)
    if otrial.should_prune():
        search.prune(record)


def _seed_study(search: DrivenSearch, study: Any) -> None:
    """Finished trials from the journal go into the study; the rest rerun first."""
    import optuna

    space = search.space
    for point in search.section["search_alg"].get("points_to_evaluate") or []:
        if not any(t.params == point for t in search.records()):
            study.enqueue_trial(space.encode(point), skip_if_exists=True)
    for trial in search.records():
        if not trial.counts:
            continue
        state = {
            "completed": optuna.trial.TrialState.COMPLETE,
            "pruned": optuna.trial.TrialState.PRUNED,
        }.get(trial.state, optuna.trial.TrialState.FAIL)
        study.add_trial(
            optuna.trial.create_trial(
                params=space.encode(trial.params),
                distributions=space.distributions,
                value=trial.metric if state == optuna.trial.TrialState.COMPLETE else None,
                intermediate_values=dict(trial.curve),
                state=state,
            )
        )
    for trial in search.take_unfinished():  # the kernel died or the search stopped in it
        study.enqueue_trial(space.encode(trial.params))


def _tell(study: Any, otrial: object, record: TrialRecord, state: str) -> None:
    import optuna

    if state == "completed" and record.metric is not None:
        outcome: dict[str, object] = {"values": record.metric}
    elif state == "pruned":
        outcome = {"state": optuna.trial.TrialState.PRUNED}
    else:
        outcome = {"state": optuna.trial.TrialState.FAIL}
    try:
        study.tell(otrial, **outcome)
    except RuntimeError as exc:
        # GridSampler calls study.stop() once the grid is done, which Optuna allows only
        # inside study.optimize; tell() has stored the trial by then (its `finally`)
        if "Study.stop" not in str(exc):
            raise
