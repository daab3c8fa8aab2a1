"""``Run``: the handle a user holds while a model trains in a kernel thread.

The worker thread runs ``engine.fit(job, emit, control)``; every event it emits goes into
the run's :class:`~ludwig_nb.runs.ledger.RunLedger` (its event list, its one reduced
``RunState``, its one ETA tracker, the GPU it trains on), then to the recorder
(events.ndjson / status.json). Views read it through the
:class:`~ludwig_nb.runs.handle.RunHandle` protocol (:meth:`Run.subscribe`,
:meth:`Run.eta_reading`); nothing reaches into the engine except through ``RunControl``.
"""

from __future__ import annotations

import dataclasses
import errno
import logging
import os
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import RunControl
from ludwig_nb.core.eta.display import format_estimate
from ludwig_nb.core.event_log import EventView
from ludwig_nb.core.state import RunState
from ludwig_nb.core.status_words import early_stop_block, status_words
from ludwig_nb.core.throttle_time import describe_throttle_time, worst_gpu
from ludwig_nb.engines.base import PreparedDataset
from ludwig_nb.runs.handle import EtaReading
from ludwig_nb.runs.ledger import EventSubscription, RunLedger
from ludwig_nb.runs.pinned_config import pin_batch_sizes
from ludwig_nb.store import rundir
from ludwig_nb.store.recorder import RunRecorder

if TYPE_CHECKING:
    import pandas as pd

    from ludwig_nb.core.eta import Estimate
    from ludwig_nb.engines.base import Engine, TrainedModel, TrainJob
    from ludwig_nb.runs.deadline_watch import DeadlineWatch
    from ludwig_nb.runs.handle import RunHandle
    from ludwig_nb.runs.profile import ResourceProfile
    from ludwig_nb.runs.slowdown_watch import SlowdownWatch

__all__ = ["Run"]

#: seconds between two looks for the sidebar's control file: a step boundary comes every
#: few hundred microseconds on a small CPU model, and a look (a ``stat``) cost ~20 us of
#: them (~7 % of the issue-15 step); a stop or pause from the sidebar waits at most this
CONTROL_POLL_S = 0.05
#: the clock of those looks (never the run's own clock, which may be a test's)
_poll_clock = time.monotonic

log = logging.getLogger(__name__)


def _table_shape(data: Any) -> tuple[int | None, int | None]:
    """Rows (all splits together) and columns (the training table's) of a read dataset."""
    if isinstance(data, PreparedDataset):  # read by another process
        return data.rows, data.columns
    frames = list(data.values()) if isinstance(data, dict) else [data]
    frames = [f for f in frames if hasattr(f, "columns") and hasattr(f, "__len__")]
    if not frames:
        return None, None
    return sum(len(f) for f in frames), len(frames[0].columns)


def _fingerprint(data: Any) -> str:
    """The read dataset's content fingerprint (the reading process's, for one read elsewhere)."""
    if isinstance(data, PreparedDataset):
        return str(getattr(data, "fingerprint", "") or "")
    from ludwig_nb.data.fingerprint import table_fingerprint

    return table_fingerprint(data)


def _failure_message(exc: BaseException, directory: Path) -> str:
    """What ``RunFailed.message`` says.

    The exception's text, and for a full disk what to do (the last checkpoint was written
    atomically, so it is whole).
    """
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        where = f" writing {exc.filename}" if exc.filename else ""
        return (
            f"no space left on the device{where}; free some space, then resume with "
            f"train(..., resume_from={str(directory)!r}) (the last checkpoint is whole)"
        )
    return str(exc) or type(exc).__name__


class Run:
    """A training run. Create it with :func:`ludwig_nb.train`, not directly.

    Args:
        run_id: The run's unique id.
        name: The run's name, as the user gave it or generated.
        directory: The run directory.
        engine: The engine that trains it.
        job: What the engine trains.
        clock: Wall-clock seconds for the events.
        read_data: Reads and checks the dataset on the run's thread before anything else
            (its result becomes ``job.dataset``); None: ``job.dataset`` is read already.
        data_label: How progress lines name the dataset ("demo:churn").
    """

    def __init__(
        self,
        *,
        run_id: str,
        name: str,
        directory: Path,
        engine: Engine,
        job: TrainJob,
        clock: Callable[[], float] = time.time,
        read_data: Callable[[], Any] | None = None,
        data_label: str = "",
    ) -> None:
        self.id = run_id
        self.name = name
        self.directory = Path(directory)
        #: what trains it, asked through the engine protocol only (engines/base.py)
        self.engine = engine
        self.engine_name = engine.name
        self._control_path = str(self.directory / rundir.CONTROL_FILE)
        self.control = RunControl(poll=self._poll_control)  # reads the sidebar's control file
        self._next_poll = 0.0  # time.monotonic() of the next look for the control file
        self.model: TrainedModel | None = None
        self.error: BaseException | None = None
        self.traceback_text = ""
        self.resources: ResourceProfile | None = None  # runs/profile.py, once attached
        self.deadline_watch: DeadlineWatch | None = None  # runs/monitoring.py, when it has one
        self.slowdown_watch: SlowdownWatch | None = None  # runs/monitoring.py, with a sampler
        self._result_writers: list[Callable[[Run], None]] = []
        self._engine = engine
        self._job = job
        self._status_eta: tuple[float, EtaReading] | None = None  # (now, reading) of a write
        self._recorder = RunRecorder(self.directory, eta=self._eta_status, words=self._words)
        self._finish_callbacks: list[Callable[[Run], None]] = []
        self._listeners: list[Callable[[ev.Event], None]] = []
        self._clock = clock
        self._ledger = RunLedger(run_id, name, engine.name, config=job.config)
        if job.device is not None and not str(job.device).startswith("cuda"):
            self._ledger.uses_gpu = False  # asked for the CPU: known before it starts
        self._lock = self._ledger.lock
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._read_data = read_data
        self._data_label = data_label
        self._data_read = threading.Event()  # set once the data is read, or its read failed
        self._data_error: BaseException | None = None
        if read_data is None:
            self._data_read.set()

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> Run:
        """Start training in a daemon thread and return this run."""
        self.emit(ev.PhaseChanged(time=self._clock(), phase="queued"))
        self._thread = threading.Thread(
            target=self._work, name=f"ludwig_nb-run-{self.id}", daemon=True
        )
        self._thread.start()
        return self

    @property
    def started(self) -> bool:
        """Whether :meth:`start` has started the run's thread."""
        return self._thread is not None

    def _work(self) -> None:
        try:
            self._load_data()
            self._emit_baseline()
            self.model = self._engine.fit(self._job, self.emit, self.control)
            if not self.state.is_final:  # an engine that forgot to say so
                status = "stopped" if self.control.stop_requested else "completed"
                self.emit(ev.RunFinished(time=self._clock(), status=status, step=self.step))
        except BaseException as exc:
            self.error = exc
            self.traceback_text = "".join(traceback.format_exception(exc))
            if exc is not self._data_error:  # a data mistake is raised to its waiter: once
                log.error("ludwig_nb run %s failed: %s", self.id, exc)
            self.emit(
                ev.RunFailed(
                    time=self._clock(),
                    step=self.step,
                    error_type=type(exc).__name__,
                    message=_failure_message(exc, self.directory),
                    traceback=self.traceback_text,
                )
            )
        finally:
            self._recorder.close()
            self._write_results()
            self._done.set()
            for callback in self._finish_callbacks:
                try:
                    callback(self)
                except Exception:
                    log.exception("ludwig_nb: a finish callback of run %s failed", self.id)
            self._data_read.set()  # a read that failed: its waiter finds the run ended

    def _load_data(self) -> None:
        """Read and check the dataset (``read_data``), saying how far it got.

        ``DataProgress`` "reading", then "read" with the rows and columns when the result is
        a table (or a dict of them). Raises what the read raises (kept for
        :meth:`wait_for_data`).
        """
        if self._read_data is None:
            return
        label = self._data_label
        self.emit(ev.DataProgress(time=self._clock(), stage="reading", source=label))
        try:
            data = self._read_data()
        except BaseException as exc:
            self._data_error = exc
            raise
        self._job.dataset = data
        rows, columns = _table_shape(data)
        self.emit(
            ev.DataProgress(
                time=self._clock(),
                stage="read",
                source=label,
                rows=rows,
                columns=columns,
                fingerprint=_fingerprint(data),
            )
        )
        self._data_read.set()

    def wait_for_data(self, timeout: float | None = None) -> BaseException | None:
        """Block until the run's thread has read its dataset (or ``timeout`` seconds).

        Returns the read's exception when it failed (the run has then ended, failed), else
        None (see :attr:`data_ready`).
        """
        self._data_read.wait(timeout)
        return self._data_error

    @property
    def data_ready(self) -> bool:
        """Whether the dataset is read and checked (or the run was given it read)."""
        return self._data_read.is_set() and self._data_error is None

    def add_result_writer(self, writer: Callable[[Run], None]) -> None:
        """Call ``writer(run)`` when the run ends, before :meth:`wait` returns.

        So the files it writes (the resource profile, Ludwig's statistics) are there once it does.
        """
        self._result_writers.append(writer)

    def _write_results(self) -> None:
        for writer in self._result_writers:
            try:
                writer(self)
            except Exception:  # a results file must never turn a finished run into a failed one
                log.exception("ludwig_nb: a result writer of run %s failed", self.id)

    def _abandon(self) -> None:
        """Release the run directory's files of a run that will never start."""
        self._recorder.close()

    def _emit_baseline(self) -> None:
        """Emit the preprocessing summary and the trivial baseline.

        Say what preprocessing works on, then the trivial baseline (both before the engine starts,
        so the dashboard has something true to show at once).
        """
        from ludwig_nb.runs.baseline import baseline_event, preprocessing_detail

        detail = preprocessing_detail(self._job)
        self.emit(ev.PhaseChanged(time=self._clock(), phase="preprocessing", detail=detail))
        event = baseline_event(self._job, self._clock)
        if event is not None:
            self.emit(event)

    def add_finish_callback(self, callback: Callable[[Run], None]) -> None:
        """Call ``callback(run)`` once the run has ended (at once if it already has)."""
        with self._lock:
            if not self._done.is_set():
                self._finish_callbacks.append(callback)
                return
        callback(self)

    # -- events ----------------------------------------------------------------------
    def emit(self, event: ev.Event) -> None:
        """Record an event (any thread): state, ETA, subscribers, run directory.

        A ``RunFinished`` gets the run's hindsight first (what went wrong with the kept model);
        a ``RunStarted`` whose batch size ``auto`` chose pins that size in ``config.yaml``.
        """
        event = self._ledger.completed(event)
        state = self._ledger.append(event)
        if isinstance(event, ev.RunStarted):
            pin_batch_sizes(self.directory, self._job.config, event.schedule)
        try:
            self._recorder.record(event, state)
        except OSError:  # a full disk must not kill training; the events stay in memory
            log.exception("ludwig_nb: could not write the event log of run %s", self.id)
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:
                log.exception("ludwig_nb: an event listener of run %s failed", self.id)

    def add_listener(self, listener: Callable[[ev.Event], None]) -> None:
        """Call ``listener(event)`` on the training thread after each event is recorded.

        Before the engine goes on: a decision it takes (``control.stop()``) applies at the very next
        step. Keep it quick; an exception in it is logged only.
        """
        self._listeners.append(listener)

    def subscribe(self) -> EventSubscription:
        """A reader that gets every event from the start, then only new ones."""
        return self._ledger.subscribe()

    def _status_reading(self, now: float) -> EtaReading:
        """The ETA reading for a status.json written at ``now``: one estimate per write.

        The recorder asks for the ETA, then for the worded fields, at the same ``now``.
        """
        cached = self._status_eta
        if cached is not None and cached[0] == now:
            return cached[1]
        reading = self.eta_reading(now)
        self._status_eta = (now, reading)
        return reading

    def _eta_status(self, now: float) -> dict[str, Any] | None:
        estimate = self._status_reading(now).estimate
        if estimate is None:
            return None
        return {
            "remaining_s": estimate.remaining_s,
            "low_s": estimate.low_s,
            "high_s": estimate.high_s,
            "state": estimate.state,
            "finish_time": now + estimate.remaining_s,
        }

    def _words(self, state: RunState, now: float) -> dict[str, object]:
        """status.json's worded fields at wall-clock ``now`` (seconds).

        The pause, the ETA and the early stop as the dashboard and the CLI say them
        (``core/status_words.py``).
        """
        watch = self._ledger.early_stop
        reading = self._status_reading(now)  # the run's one estimate and forecast
        forecast = None if state.is_final else reading.forecast
        patience = watch.patience if reading.early_stopping else 0
        block = early_stop_block(state, patience, watch.metric, forecast)
        bound = reading.early_stopping and bool(state.total_steps)
        eta_text = format_estimate(reading.estimate, now, bound=bound)
        deadline = _as_dict(reading.deadline)
        return status_words(state, block, self.throttle_text(), deadline, eta_text)

    def throttle_text(self) -> str:
        """The time its GPU lost to throttling so far, in words ("" without figures)."""
        watch = self.slowdown_watch
        if watch is None:
            return ""
        figures = watch.figures()
        worst = worst_gpu({str(k): v for k, v in figures.items()})
        if worst is None:
            return ""
        return describe_throttle_time(worst[1], gpu=f"GPU {worst[0]}" if len(figures) > 1 else None)

    def _deadline_block(self, now: float, estimate: Estimate | None) -> dict[str, object] | None:
        """The deadline against ``estimate`` at ``now`` (s); None without a deadline."""
        watch = self.deadline_watch
        if watch is None:
            return None
        view = watch.outlook(now, estimate)
        deadline = watch.deadline
        return {
            "at": deadline.at,
            "label": deadline.label,
            "action": deadline.action,
            "verdict": view.verdict,
            "text": view.text,
        }

    def eta(self, now: float | None = None) -> Estimate | None:
        """The current ETA estimate (``core.eta.Estimate``) or None before any basis."""
        return self._ledger.estimate(self._clock() if now is None else now)

    def eta_reading(self, now: float | None = None) -> EtaReading:
        """The run's one ETA at wall-clock ``now`` (seconds; default: the run's clock).

        The estimate, the early-stopping forecast, the first stable finish time and the
        deadline against the estimate.
        """
        now = self._clock() if now is None else now
        reading = self._ledger.eta_reading(now)
        deadline = self._deadline_block(now, reading.estimate)
        return reading if deadline is None else dataclasses.replace(reading, deadline=deadline)

    def clock(self) -> float:
        """The run's wall clock (seconds): its events' times (a test's virtual clock there)."""
        return self._clock()

    # -- control ---------------------------------------------------------------------
    def stop(self, reason: str = "user") -> None:
        """Stop gracefully at the next step boundary; the model and best checkpoint stay."""
        if not self.is_done:
            self.control.stop(reason)

    def pause(self, reason: str = "user") -> None:
        """Pause at the next step boundary for ``reason`` (pauses nest); no-op once done."""
        if not self.is_done:
            self.control.pause(reason)

    def resume(self, reason: str | None = None) -> None:
        """Release the pause ``reason``, or every pause when None."""
        self.control.resume(reason)

    def _poll_control(self) -> None:
        # every step boundary polls, but looks at most every CONTROL_POLL_S; a bare
        # existence check first (a third of the cost of trying to read a missing file)
        now = _poll_clock()
        if now < self._next_poll:
            return
        self._next_poll = now + CONTROL_POLL_S
        if not os.path.exists(self._control_path):
            return
        request = rundir.consume_control(self.directory)
        if request is None:
            return
        action = request["action"]
        source = str(request.get("source", "control_file"))
        if action == "stop":
            self.control.stop(source)
        elif action == "pause":
            self.control.pause(source)
        else:
            self.control.resume()

    def wait(self, timeout: float | None = None) -> Run:
        """Block until the run ends (or ``timeout`` seconds); returns the run."""
        self._done.wait(timeout)
        return self

    # -- read-only views ---------------------------------------------------------------
    @property
    def is_done(self) -> bool:
        """Whether the run has ended and its files are written."""
        return self._done.is_set()

    @property
    def is_active(self) -> bool:
        """Whether the run has not ended yet."""
        return not self._done.is_set()

    @property
    def config(self) -> dict[str, object]:
        """The fully rendered config this run trains (read it, do not change it)."""
        return self._job.config

    @property
    def state(self) -> RunState:
        """The run's state now (reduced once per event, on the emitting thread)."""
        with self._lock:
            return self._ledger.state

    @property
    def device_index(self) -> int | None:
        """The GPU it trains on (alarms act on it), as the latest ``RunStarted`` says; None on CPU.

        Before the run starts, whatever :attr:`device_index` was set to.
        """
        return self._ledger.device_index

    @device_index.setter
    def device_index(self, index: int | None) -> None:
        self._ledger.device_index = index

    @property
    def uses_gpu(self) -> bool | None:
        """Whether it trains on a GPU.

        False on the CPU (no GPU alarm acts on it), None while its device is not known yet
        (before its ``RunStarted``, with the device left to it).
        """
        return self._ledger.uses_gpu

    @property
    def status(self) -> str:
        """The run's status (``queued``, ``training``, ``completed``, ...)."""
        return self.state.status

    @property
    def step(self) -> int:
        """Steps finished so far."""
        return self.state.step

    @property
    def total_steps(self) -> int:
        """Steps planned in all (an upper bound with early stopping)."""
        return self.state.total_steps

    @property
    def epoch(self) -> int:
        """The 0-based epoch of the last step."""
        return self.state.epoch

    @property
    def device(self) -> str:
        """The device the run trains on (e.g. ``cuda:0``, ``cpu``); ``""`` until it starts."""
        return self.state.device

    @property
    def events(self) -> EventView:
        """Every event so far, in order.

        A read-only sequence (index, slice, iterate, ``list(...)``) that later events do not change.
        Steps are rebuilt as they are read, so a long run's steps are never all in memory as objects
        at once.
        """
        with self._lock:
            return self._ledger.events.view()

    @property
    def steps_trained(self) -> tuple[int, int]:
        """``(steps, samples)`` trained so far: every step, whether its record was kept or not.

        A long run's record thins its steps (``core/step_thinning.py``); these count them all.
        """
        with self._lock:
            log = self._ledger.events
            return log.steps_seen, log.samples_seen

    @property
    def steps(self) -> pd.DataFrame:
        """One row per training step kept in the record (past 200,000 steps a thinning sample).

        ``step``, ``epoch``, ``loss``, ``learning_rate``, ``batch_size``, ``start_time``, ``time``
        (wall-clock seconds), ``duration_s`` and ``data_wait`` (seconds of the step spent waiting
        for its batch; None where the engine does not report it). Built from the columns, without
        rebuilding any event.
        """
        import pandas as pd

        with self._lock:
            columns = self._ledger.events.step_columns()
        frame = pd.DataFrame(columns)
        frame["duration_s"] = frame["time"] - frame["start_time"]
        order = ["step", "epoch", "loss", "learning_rate", "batch_size", "start_time", "time"]
        return frame[[*order, "duration_s", "data_wait"]]

    @property
    def splits(self) -> dict[str, pd.DataFrame]:
        """The rows of each split: ``{"training": ..., "validation": ..., "test": ...}``.

        DataFrames cut as this run's engine cut them (same function, same seed), so
        ``run.model.evaluate(run.splits["test"])`` scores rows the model never trained on.
        Absent splits are omitted. Raises ``SplitsUnavailable`` for an engine that cuts its
        own splits (Ludwig's) from one table, and ``DataError`` when the dataset cannot be
        read again.
        """
        from ludwig_nb.runs.splits import run_splits

        self.wait_for_data()
        return run_splits(self._engine, self._job)

    @property
    def history(self) -> pd.DataFrame:
        """One row per evaluation: step, epoch, and ``<split>.<feature>.<metric>`` columns."""
        import pandas as pd

        rows = []
        with self._lock:
            others = self._ledger.events.others()  # evaluations are never steps: skip the columns
        for event in others:
            if isinstance(event, ev.EvaluationFinished):
                row: dict[str, object] = {"step": event.step, "epoch": event.epoch}
                for split, features in event.metrics.items():
                    for feature, metrics in features.items():
                        for metric, value in metrics.items():
                            row[f"{split}.{feature}.{metric}"] = value
                rows.append(row)
        return pd.DataFrame(rows)

    @property
    def profile(self) -> pd.DataFrame:
        """The resource profile.

        one row per sampler tick (1 Hz by default) with ``phase``, ``step``, ``host_*`` and
        ``gpu<i>_*`` columns (bytes, s, J, W, °C, %). Empty when the run has no sampler
        (``gpu_watch: {enabled: false}``).
        """
        from ludwig_nb.runs.profile_files import profile_frame

        if self.resources is None:
            return profile_frame({})
        return profile_frame({"samples": self.resources.samples()})

    @property
    def top_ops(self) -> pd.DataFrame:
        """The operators a ``profile_steps`` capture recorded, most self time first.

        ``name``, ``calls``, ``self_cpu_s``, ``cpu_total_s``, ``self_device_s`` (seconds). Raises
        ``FileNotFoundError`` saying how to get one when the run has no capture.
        """
        import json

        import pandas as pd

        path = self.directory / "torch_top_ops.json"
        if not path.is_file():
            raise FileNotFoundError(
                f"run {self.name!r} has no torch.profiler capture ({path} is missing): "
                "train with profile_steps=N (--profile-steps N) to record N steps"
            )
        return pd.DataFrame(json.loads(path.read_text(encoding="utf-8"))["ops"])

    @property
    def profile_summary(self) -> dict[str, object]:
        """The resource profile's summary, per phase.

        Per-phase seconds, steps/s, samples/s, peak memory (bytes), energy (J), J per sample, peak
        temperature (°C), seconds throttled; ``{}`` without a profile.
        """
        if self.resources is None:
            return {}
        summary = self.resources.to_dict()["summary"]
        return dict(summary) if isinstance(summary, dict) else {}

    def __repr__(self) -> str:
        state = self.state
        return (
            f"<Run {self.name!r} {state.status} step {state.step}/{state.total_steps} "
            f"dir={str(self.directory)!r}>"
        )

    def _repr_html_(self) -> str:
        import html

        state = self.state
        return (
            f"<code>ludwig_nb</code> run <b>{html.escape(self.name)}</b>: "
            f"{html.escape(state.status)}, step {state.step}/{state.total_steps} "
            f"<small>({html.escape(str(self.directory))})</small>"
        )


if TYPE_CHECKING:

    def _run_is_a_handle(run: Run) -> RunHandle:  # mypy: a Run is what the views read
        return run


def _as_dict(block: Mapping[str, object] | None) -> dict[str, object] | None:
    return None if block is None else dict(block)
