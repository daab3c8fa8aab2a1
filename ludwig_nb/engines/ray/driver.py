"""The driver side of a Ray run, on the run's thread in the kernel.

:class:`RayDriver` starts Ray lazily (``ignore_reinit_error``, ``log_to_driver=False``: the
workers' output stays out of the cell), creates the run's channel, launches ``fit()`` of a
``TorchTrainer`` inside a ``num_cpus=0`` Ray task (so a second Stop can
``ray.cancel(force=True)`` it, which ends the controller and its workers and frees the
placement group), then long-polls the channel and feeds every event to the run's ``emit``,
forwarding Stop/Pause the other way. It never shuts Ray down and never calls ``ray stop``.

Before the workers report (Ray starting, the workers being placed) a Stop ends the run at
once (the job is cancelled: nothing trained yet to stop gracefully); workers the Ray cannot
place are said at once when it can never have them, and after :data:`PLACEMENT_TIMEOUT_S`
when its free resources do not come. Whatever ends the job, the driver cancels it (its
controller and workers end) and kills the channel: nothing of the run is left running.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import Control, StopRequested
from ludwig_nb.engines.base import Emit, TrainJob
from ludwig_nb.engines.ray import resources
from ludwig_nb.engines.ray.backend import RayBackend, worker_config
from ludwig_nb.engines.ray.channel import NAMESPACE, ProgressChannel
from ludwig_nb.engines.ray.data import PathsOnWorkers
from ludwig_nb.engines.ray.errors import RayNotStarted, RunKilled, WorkerFailed
from ludwig_nb.engines.ray.gpu_view import WorkersView
from ludwig_nb.engines.ray.heartbeat import HEARTBEAT_S
from ludwig_nb.engines.ray.worker import WORKER_LOGS, train_loop_per_worker
from ludwig_nb.store.rundir import write_json_atomic

__all__ = [
    "DASHBOARD_PORT",
    "POLL_S",
    "STORED_AT",
    "WORKERS_FILE",
    "RayDriver",
    "dashboard_port",
    "ensure_ray",
    "worker_runtime_env",
]

log = logging.getLogger(__name__)

WORKERS_FILE = "workers.json"
#: the setting that asks for each of Ray's own resources
_SETTINGS = {"CPU": "backend.trainer.num_workers", "GPU": "backend.trainer.use_gpu"}
#: ``<run dir>/checkpoints/stored_at.json``: where a run with a storage path keeps them
STORED_AT = "stored_at.json"
POLL_S = 0.25  # seconds one long-poll of the channel waits for events
#: starts of a local Ray tried: Ray waits a fixed 30 s for its node, which a busy machine misses
_START_ATTEMPTS = 3
DASHBOARD_PORT = 8265  # Ray's default


def ensure_ray(address: str | None) -> bool:
    """Connect to Ray once per process; later runs (and searches) reuse the connection.

    ``address`` (or ``RAY_ADDRESS``) joins a cluster, neither starts a local one. True when this
    call started it. Never shuts anything down.

    A local Ray is started on a thread that lives as long as the process (:class:`_RayHost`):
    Ray ties its node processes (GCS, raylet, agents) to the thread that started them
    (``PR_SET_PDEATHSIG`` acts when that thread ends), so one started on a run's thread died
    with the run, and the next run's Ray calls ended the whole process ("Failed to connect to
    GCS ... The program will terminate").
    """
    import ray

    if ray.is_initialized():
        return False
    return _RayHost.start(address or os.environ.get("RAY_ADDRESS") or None)


class _RayHost:
    """The thread that starts (and then keeps) this process's connection to Ray.

    It calls ``ray.init`` and then waits for the process to end: the node processes a local
    Ray starts are its children and live as long as it does. One per process; the caller waits
    for the start and gets its exception.
    """

    lock = threading.Lock()
    thread: threading.Thread | None = None
    #: this process started a local Ray (not one it joined): it is all there is
    started_here = False
    #: set only by tests: the host thread ends (a kernel's lives as long as the kernel)
    release = threading.Event()

    @classmethod
    def start(cls, target: str | None) -> bool:
        import queue

        with cls.lock:
            import ray

            if ray.is_initialized():
                return False
            done: queue.SimpleQueue[BaseException | None] = queue.SimpleQueue()
            thread = threading.Thread(
                target=cls._host, args=(target, done), name="ludwig_nb-ray-host", daemon=True
            )
            thread.start()
            failure = done.get()
            if failure is not None:
                raise failure
            cls.thread = thread
            cls.started_here = target is None
            return True

    @staticmethod
    def _host(target: str | None, done: Any) -> None:
        try:
            _init(target)
        except BaseException as failure:  # handed to the caller, which raises it
            done.put(failure)
            return
        done.put(None)
        _RayHost.release.wait()  # keep the node processes' parent thread alive


#: ``ray.init``'s address that starts a new local Ray. Without an address Ray joins the
#: cluster named in ``/tmp/ray/ray_current_cluster`` (the last ``ray start`` or test cluster
#: on the machine, anyone's), and with ``~/.ray/auth_token`` present it turns token
#: authentication on for this driver alone: that cluster's GCS and raylet, which send no
#: token, are refused, and Ray destroys every actor this driver creates before it runs
#: ("all references to the actor were removed ... cancelled before it started running").
_LOCAL = "local"


def _init(target: str | None) -> None:
    """``ray.init`` once, retried when a loaded machine misses the raylet's wait.

    ``target`` None starts a new local Ray (never another one found on the machine).

    Raises ``RayNotStarted`` (what Ray said, and what to do) when a local Ray does not start
    in ``_START_ATTEMPTS`` tries or the cluster at ``target`` cannot be reached.
    """
    import ray

    # a busy machine starts the dashboard agent in more than the raylet's default 30 s wait
    os.environ.setdefault("RAY_agent_register_timeout_ms", "120000")
    for attempt in range(_START_ATTEMPTS):  # a loaded machine can miss the raylet's fixed wait
        local = {} if target is not None else {"dashboard_port": dashboard_port()}
        before = _child_pids()
        try:
            ray.init(
                address=_LOCAL if target is None else target,
                ignore_reinit_error=True,
                log_to_driver=False,
                logging_level=logging.WARNING,
                **local,
            )
            return
        except Exception as failure:  # Ray raises a bare Exception when its node times out
            timed_out = target is None and "timed out during startup" in str(failure)
            if not timed_out or attempt == _START_ATTEMPTS - 1:
                raise _not_started(target, failure, timed_out) from failure
            log.warning("ludwig_nb: the local Ray did not start in time; trying again")
            ray.shutdown()
            _end_failed_node(before)


def _child_pids() -> set[int]:
    """The ids of this process's descendants now."""
    import psutil

    return {child.pid for child in psutil.Process().children(recursive=True)}


def _end_failed_node(before: set[int]) -> None:
    """End the Ray processes a failed start left running (its GCS, dashboard, monitors).

    ``ray.shutdown`` after a node that timed out leaves them; only descendants that were not
    in ``before`` and run Ray's code are ended (by id: terminate, then kill after 10 s).
    """
    import psutil

    left = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if child.pid not in before and _is_ray_process(child.cmdline()):
                child.terminate()
                left.append(child)
    _, alive = psutil.wait_procs(left, timeout=10)
    for child in alive:
        with contextlib.suppress(psutil.Error):
            child.kill()


def _is_ray_process(cmdline: list[str]) -> bool:
    """Whether a command line is one of Ray's processes (its binaries, scripts or workers)."""
    return any(f"{os.sep}ray{os.sep}" in part or part.startswith("ray::") for part in cmdline)


def _not_started(target: str | None, failure: Exception, timed_out: bool) -> RayNotStarted:
    """Why Ray did not start, in a user's words, with Ray's own first line."""
    said = next(iter(str(failure).strip().splitlines()), "") or type(failure).__name__
    if target is not None:
        return RayNotStarted(
            f"could not connect to the Ray cluster at {target!r} (backend.address, or the "
            f"RAY_ADDRESS environment variable): {said}"
        )
    if timed_out:
        return RayNotStarted(
            f"the local Ray did not start: its node missed Ray's start-up wait "
            f"{_START_ATTEMPTS} times ({said}); this machine is too busy for it now: run "
            "again when it is quieter"
        )
    return RayNotStarted(f"the local Ray did not start: {said}")


def dashboard_port(preferred: int = DASHBOARD_PORT) -> int:
    """The port a local Ray's dashboard takes: Ray's default when it is free, else a free one.

    Another Ray on the machine (another kernel's local Ray) may hold the default, and the new
    head then fails to start.

    Args:
        preferred: The port to use when it is free.

    Returns:
        A port number nothing listens on now.
    """
    for port in (preferred, 0):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(probe.getsockname()[1])
    raise OSError("no free port for the Ray dashboard")


def worker_runtime_env() -> dict[str, Any]:
    """The runtime env of the run's actor and task (the controller and the workers inherit it).

    ``PYTHONPATH`` starts with the folder this ludwig_nb is imported from, so that the workers
    import the same code on this machine (an editable install or a clone). Other nodes of a cluster
    need ludwig_nb installed, like Ray itself, at the same version.
    """
    import ludwig_nb

    root = str(Path(ludwig_nb.__file__).resolve().parent.parent)
    inherited = os.environ.get("PYTHONPATH")
    return {
        "env_vars": {"PYTHONPATH": os.pathsep.join([root, *([inherited] if inherited else [])])}
    }


def _watch_settings(config: dict[str, Any]) -> dict[str, Any]:
    """What the workers need of ``gpu_watch``: whether to read GPUs, and how often (s)."""
    section = config.get("gpu_watch") or {}
    enabled = section.get("enabled", "auto") if isinstance(section, dict) else "auto"
    interval = section.get("interval", 1.0) if isinstance(section, dict) else 1.0
    simulated = isinstance(section, dict) and bool(section.get("simulate"))  # the kernel's
    return {
        "enabled": enabled is not False and not simulated,
        "interval": max(0.25, float(interval or 1.0)),
    }


def _dead_rank(beats: Any, errors: list[dict[str, Any]], exc: BaseException | None) -> str:
    """``": rank 1 on <host> (pid N) is gone"``: the rank whose process died first, or "".

    Read after the job ended, when its teardown has ended the other ranks too, so a process
    that is gone is not enough: see :func:`_first_dead`. ``errors`` are the ranks' own reports,
    ``exc`` is what the job raised (Ray Train names the ranks whose actor it found dead).
    """
    import psutil
    from ray.exceptions import RayActorError

    reports: list[dict[str, Any]] = []
    if beats is not None:
        with contextlib.suppress(Exception):  # the channel went with the job
            reports = list(beats())
    here = socket.gethostname()

    def gone(report: dict[str, Any]) -> bool:
        pid = report.get("pid")
        return report.get("host") == here and isinstance(pid, int) and not psutil.pid_exists(pid)

    lost = _ranks_ray_lost(exc, RayActorError)
    first = _first_dead(reports, {e.get("rank") for e in errors}, lost, gone)
    if first is None:
        return f": rank {min(lost)} is gone" if lost else ""
    return f": rank {first.get('rank')} on {first.get('host')} (pid {first.get('pid')}) is gone"


def _ranks_ray_lost(exc: BaseException | None, actor_error: type[BaseException]) -> set[int]:
    """The ranks whose actor Ray Train found dead when the job failed: their process died.

    Ray Train polls every rank; a rank whose poll failed with ``actor_error`` (Ray's
    ``RayActorError``, kept as the failure's ``health_check_failure``) lost its process. Its
    ``WorkerGroupError`` maps each failed rank to its failure; ``exc`` is that error or Ray's
    task error around it (``cause``). Empty when ``exc`` names no rank.
    """
    for _ in range(3):  # the task error, the training error, at most one more wrapper
        failures = getattr(exc, "worker_failures", None)
        if isinstance(failures, dict):
            return {
                int(rank)
                for rank, failure in failures.items()
                if isinstance(getattr(failure, "health_check_failure", failure), actor_error)
            }
        exc = getattr(exc, "cause", None) or getattr(exc, "__cause__", None)
    return set()


def _first_dead(
    reports: list[dict[str, Any]],
    reported: set[Any],
    lost: set[int],
    gone: Any,
) -> dict[str, Any] | None:
    """The last heartbeat of the rank whose process died first, or None.

    The job's teardown ends every rank once one has failed, so which processes are gone
    afterwards does not say which died first. A rank Ray found dead (``lost``) comes first;
    then a rank whose process is ``gone`` and that did not report an error itself
    (``reported``): a rank that reported its error was alive after it, and ended with the
    teardown. Among several, the one whose last heartbeat is oldest (it stopped first).

    Args:
        reports: Each rank's last heartbeat (``rank``, ``host``, ``pid``, ``time`` in s).
        reported: The ranks that reported their own error to the channel.
        lost: The ranks Ray found dead (:func:`_ranks_ray_lost`).
        gone: Whether a heartbeat's process no longer exists.
    """
    dead = [
        report
        for report in reports
        if report.get("rank") in lost or (report.get("rank") not in reported and gone(report))
    ]
    if not dead:
        return None
    return min(
        dead,
        key=lambda r: (r.get("rank") not in lost, float(r.get("time") or 0.0), r.get("rank")),
    )


def _fit(loop: dict[str, Any], scaling: dict[str, Any], run: dict[str, Any]) -> None:
    """``TorchTrainer(...).fit()``: in a Ray task, or in-process in local mode."""
    from ray.train import FailureConfig, RunConfig, ScalingConfig
    from ray.train.torch import TorchTrainer

    failures = run.pop("max_failures")
    TorchTrainer(
        train_loop_per_worker,
        train_loop_config=loop,
        scaling_config=ScalingConfig(**scaling),
        run_config=RunConfig(**run, failure_config=FailureConfig(max_failures=failures)),
    ).fit()


class RayDriver:
    """One run's driver: :meth:`run` returns the model or raises (see engine.py).

    Args:
        job: The run's job (config, data, run directory, options).
        emit: Where the workers' events go (the run's ``emit``, on the driver thread).
        control: The run's control, forwarded to the workers through the channel.
    """

    def __init__(self, job: TrainJob, emit: Emit, control: Control) -> None:
        self.job, self.emit, self.control = job, emit, control
        self.backend = RayBackend.from_config(job.config)
        self.channel_name = f"run-{job.run_id}"
        storage = self.backend.storage_path
        #: where rank 0 writes checkpoints/ and model/ (shared storage on a cluster)
        self.storage_dir = (
            Path(storage).expanduser().resolve() / job.run_id if storage else Path(job.run_dir)
        )
        self.last_step = -1
        self.last_checkpoint: str | None = None
        self._sent: tuple[str | None, str | None, float] = (None, None, 1.0)
        self._killed = False
        self._view = WorkersView()
        self._beats_at = float("-inf")  # monotonic time the heartbeats were last read
        self._launched = 0.0  # monotonic time the job was launched
        self._started = False  # rank 0 has reported (its RunStarted): the workers are placed
        self._early_stop = False  # a Stop came before that: the job was cancelled
        self._unplaced: str | None = None  # why the workers could not be placed in time
        self._ranks: dict[int, str] = {}  # rank -> host, from the heartbeats

    # -- the loop configs ----------------------------------------------------------------
    def _loop_config(self, dataset: Any) -> dict[str, Any]:
        return {
            "channel": self.channel_name,
            "config": worker_config(self.job.config),
            "dataset": dataset,
            "run_dir": str(self.storage_dir),
            "run_id": self.job.run_id,
            "name": self.job.name,
            "seed": self.job.seed,
            "use_gpu": self.backend.use_gpu,
            "resume_from": self._resume_dir(),
            "gpu_watch": _watch_settings(self.job.config),
        }

    def _resume_dir(self) -> str | None:
        """The run directory to resume from: where its checkpoints are.

        For a run with a storage path that is on the storage (``checkpoints/stored_at.json``
        says where).
        """
        source = self.job.resume_from
        if source is None:
            return None
        source = Path(source)
        pointer = source / "checkpoints" / STORED_AT
        if pointer.is_file():
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                return str(Path(json.loads(pointer.read_text(encoding="utf-8"))["run_dir"]))
        if not (source / "checkpoints").is_dir() and self.backend.storage_path:
            stored = Path(self.backend.storage_path).expanduser().resolve() / source.name
            if (stored / "checkpoints").is_dir():
                return str(stored)
        return str(source)

    def _point_home(self) -> None:
        """Write ``<run dir>/checkpoints/stored_at.json`` when the checkpoints are elsewhere.

        With a storage path it names where the checkpoints are, so that
        ``resume_from=<run dir>`` finds them (after a stop or a crash, from any kernel that
        sees the storage).
        """
        run_dir = Path(self.job.run_dir)
        if self.storage_dir.resolve() == run_dir.resolve():
            return
        write_json_atomic(
            run_dir / "checkpoints" / STORED_AT,
            {
                "run_dir": str(self.storage_dir),
                "checkpoints": str(self.storage_dir / "checkpoints"),
            },
        )

    def _scaling(self) -> dict[str, Any]:
        b = self.backend
        return {
            "num_workers": b.num_workers,
            "use_gpu": b.use_gpu,
            "resources_per_worker": dict(b.resources_per_worker) or None,
            "placement_strategy": b.placement_strategy,
        }

    def _run_config(self) -> dict[str, Any]:
        ray_dir = self.storage_dir / "ray"  # Ray Train's own run state
        return {
            "name": f"ludwig_nb-{self.job.run_id}",
            "storage_path": str(ray_dir),
            "max_failures": self.backend.max_failures,
        }

    # -- the run -------------------------------------------------------------------------
    def run(self) -> Any:
        """Train on Ray Train and return the model rank 0 saved (None: stopped before it)."""
        self.storage_dir.mkdir(parents=True, exist_ok=True)
        self._point_home()
        if not self._run_remote():
            return None  # stopped before the workers trained: the run ends "stopped"
        return self._collect_model()

    def _emit_phase(self, detail: str) -> None:
        import time

        self.emit(ev.PhaseChanged(time=time.time(), phase="preprocessing", detail=detail))

    def _run_remote(self) -> bool:
        """The job on Ray; False when a Stop came before the workers trained."""
        import ray

        self._emit_phase("starting Ray")
        ensure_ray(self.backend.address)
        if self.control.stop_requested:
            return False  # stopped while Ray started: nothing launched
        self._check_cluster(ray)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        # the channel and the task that owns the controller live on the driver's node: losing
        # another node then loses workers (a failed run), never the run's plumbing
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        actor = (
            ray.remote(num_cpus=0)(ProgressChannel)
            .options(
                name=self.channel_name,
                namespace=NAMESPACE,
                max_concurrency=64,
                runtime_env=worker_runtime_env(),
                scheduling_strategy=here,
            )
            .remote()
        )
        ref = None
        try:
            self._emit_phase(f"starting {self.backend.num_workers} Ray Train workers")
            dataset = self.job.dataset
            if not isinstance(dataset, PathsOnWorkers):  # a path is read by the workers
                dataset = [ray.put(dataset)]  # nested: the workers get the ref
                self.job.dataset = dataset  # the store holds the table; the kernel lets go
            task = ray.remote(
                num_cpus=0,
                max_retries=0,
                runtime_env=worker_runtime_env(),
                scheduling_strategy=here,
            )(_fit)
            ref = task.remote(self._loop_config(dataset), self._scaling(), self._run_config())

            def poll(cursor: int, timeout: float) -> tuple[list[Any], int]:
                result: tuple[list[Any], int] = ray.get(actor.poll.remote(cursor, timeout))
                return result

            def done() -> bool:
                ready, _ = ray.wait([ref], timeout=0)
                return bool(ready)

            def set_control(stop: str | None, pause: str | None, duty: float) -> None:
                actor.set_control.remote(stop, pause, duty)

            def kill() -> None:
                ray.cancel(ref, force=True)

            def beats() -> list[dict[str, Any]]:
                result: list[dict[str, Any]] = ray.get(actor.heartbeats.remote(), timeout=10)
                return result

            self._launched = time.monotonic()
            self._pump(poll, done, set_control, kill, beats)
            with contextlib.suppress(Exception):
                self._write_workers(ray.get(actor.workers.remote(), timeout=30))
            try:
                ray.get(ref)
            except BaseException as exc:
                if self._early_stop:
                    return False
                if self._unplaced is not None:
                    raise WorkerFailed(self._unplaced) from None
                if self._killed:
                    raise self._kill_error() from None
                self._raise_failure(exc, ray.get(actor.errors.remote()), beats)
            return not self._early_stop
        finally:
            if ref is not None:
                with contextlib.suppress(Exception):  # whatever ended it, nothing of it runs on
                    ray.cancel(ref, force=True)
            with contextlib.suppress(Exception):
                ray.kill(actor)

    # -- the pump ------------------------------------------------------------------------
    def _pump(self, poll: Any, done: Any, set_control: Any, kill: Any, beats: Any) -> None:
        """Feed events until the job ends, then drain what is left.

        The ranks' heartbeats are read about once a second (and once more at the end).
        """
        cursor = 0
        while True:
            finished = done()  # read before polling: nothing pushed before the end is lost
            if not self._started and not finished:
                self._before_start(kill)
            self._forward_control(set_control, kill)
            batch, cursor = poll(cursor, 0.0 if finished else POLL_S)
            for event in batch:
                if isinstance(event, ev.StepFinished) and event.step <= self.last_step:
                    continue  # redone after a restart from the last checkpoint: seen already
                self._started = True
                self._observe(event)
                self.emit(self._as_run_wide(event))
            self._read_beats(beats, force=finished and not batch)
            if finished and not batch:
                return

    def _before_start(self, kill: Any) -> None:
        """While the workers are not placed, a Stop cancels the job.

        So does a placement that waits past :data:`PLACEMENT_TIMEOUT_S` for resources the
        cluster does not have free.
        """
        if self._early_stop or self._unplaced is not None:
            return
        if self.control.stop_requested:
            log.info(
                "ludwig_nb: Stop before the workers started: cancelling run %s", self.job.run_id
            )
            self._early_stop = True
            kill()
            return
        waited = time.monotonic() - self._launched
        if waited >= resources.PLACEMENT_TIMEOUT_S:
            missing = self._missing_now()
            if missing is not None:
                workers = self.backend.world_size
                self._unplaced = (
                    f"Ray could not place the {workers} worker{'s' if workers != 1 else ''} "
                    f"in {waited:.0f} s: {missing}; the job was cancelled"
                )
                kill()

    def _missing_now(self) -> str | None:
        """What the workers need that the cluster does not have free now, or None."""
        import ray

        needs = resources.worker_needs(self.backend)
        free = ray.available_resources()
        for name, each in needs.items():
            if float(free.get(name, 0.0)) + 1e-9 < each:
                total = float(ray.cluster_resources().get(name, 0.0))
                setting = _SETTINGS.get(name, f"backend.trainer.resources_per_worker.{name}")
                return (
                    f"each worker needs {each:g} {name} and the cluster has "
                    f"{float(free.get(name, 0.0)):g} free of {total:g} ({setting})"
                )
        return None

    def _check_cluster(self, ray: Any) -> None:
        """Workers the connected Ray can never place (nor grow to): ``WorkerFailed`` at once."""
        if not _RayHost.started_here:
            return  # a cluster this kernel joined may grow: its placement is waited for
        problem = resources.shortfall(self.backend, dict(ray.cluster_resources()), "this Ray")
        if problem is not None:
            path, text = problem
            raise WorkerFailed(f"{'.'.join(path)}: {text}")

    def _as_run_wide(self, event: ev.Event) -> ev.Event:
        """Name the run's devices in rank 0's ``RunStarted`` (it names rank 0's own).

        The run's devices are every worker's (the workers row); the alarms watch every GPU
        the workers report, not one index.
        """
        if not isinstance(event, ev.RunStarted):
            return event
        kind = event.device.partition(":")[0] or "cpu"
        return dataclasses.replace(
            event, device=f"{self.backend.world_size} × {kind} (Ray)", device_index=None
        )

    def _read_beats(self, beats: Any, force: bool = False) -> None:
        """Heartbeats -> the run's GPU snapshot (``job.gpu_feed``) and ``WorkersReported``."""
        now = time.monotonic()
        if not force and now - self._beats_at < HEARTBEAT_S:
            return
        self._beats_at = now
        try:
            reports = beats()
        except Exception:  # the channel is busy or gone: the next second tries again
            log.debug("ludwig_nb: no heartbeats from run %s", self.job.run_id, exc_info=True)
            return
        if not reports:
            return
        wall = time.time()
        snapshot = self._view.snapshot(reports, wall)
        if snapshot is not None and self.job.gpu_feed is not None:
            self.job.gpu_feed(snapshot)
        row = self._view.workers(reports, wall)
        if row is not None:
            self.emit(ev.WorkersReported(time=wall, workers=row))

    def _observe(self, event: ev.Event) -> None:
        if isinstance(event, ev.StepFinished):
            self.last_step = event.step
        elif isinstance(event, ev.CheckpointSaved):
            self.last_checkpoint = event.path

    def _forward_control(self, set_control: Any, kill: Any) -> None:
        with contextlib.suppress(StopRequested):
            self.control.checkpoint()  # reads the sidebar's control file
        stop = self.control.stop_reason if self.control.stop_requested else None
        reasons = getattr(self.control, "pause_reasons", None)
        pause = (
            (",".join(sorted(reasons)) if reasons else None)
            if reasons is not None
            else ("user" if self.control.paused else None)
        )
        duty = float(getattr(self.control, "duty", 1.0))
        if (stop, pause, duty) != self._sent:
            set_control(stop, pause, duty)
            self._sent = (stop, pause, duty)
        stops = int(getattr(self.control, "stop_count", 1 if stop else 0))
        if kill is not None and stops >= 2 and not self._killed:
            log.warning("ludwig_nb: second Stop: cancelling Ray job of run %s", self.job.run_id)
            self._killed = True
            kill()

    def _write_workers(self, reports: list[dict[str, Any]]) -> None:
        """``<run dir>/workers.json``.

        One entry per rank (host, device, steps, steps/s, parameters_sha256: equal on every rank
        when the ranks stayed in step).
        """
        if reports:
            write_json_atomic(Path(self.job.run_dir) / WORKERS_FILE, {"workers": reports})

    # -- the end -------------------------------------------------------------------------
    def _kill_error(self) -> RunKilled:
        where = (
            f"the last checkpoint is {self.last_checkpoint}; continue with "
            f"resume_from={str(self.job.run_dir)!r}"
            if self.last_checkpoint
            else "no checkpoint was saved"
        )
        return RunKilled(
            f"the Ray job was cancelled by a second Stop after step {self.last_step}; {where}"
        )

    def _raise_failure(
        self, exc: BaseException, errors: list[dict[str, Any]], beats: Any = None
    ) -> None:
        logs = self.storage_dir / WORKER_LOGS  # rank 0 writes the run folder there
        who = _dead_rank(beats, errors, exc)  # a rank whose process died is the cause; the
        if errors and who:  # others' errors (a collective that lost its peer) followed it
            first = errors[0]
            failed = WorkerFailed(
                f"the Ray job failed{who}; rank {first['rank']} then stopped with "
                f"{first['error_type']} (worker logs: {logs})"
            )
            failed.add_note(f"rank {first['rank']}'s traceback:\n{first['traceback']}")
            raise failed from None
        if errors:
            first = errors[0]
            failed = WorkerFailed(
                f"Ray worker rank {first['rank']} on {first['host']} failed: "
                f"{first['error_type']}: {first['message']} (worker logs: "
                f"{logs})"
            )
            failed.add_note(f"the worker's traceback:\n{first['traceback']}")
            raise failed from None
        text = str(exc).strip().splitlines()
        summary = next((line for line in reversed(text) if line.strip()), type(exc).__name__)
        failed = WorkerFailed(
            f"the Ray job failed ({type(exc).__name__}){who}: {summary} (worker logs: {logs})"
        )
        failed.add_note(str(exc))
        raise failed from None

    def _collect_model(self) -> Any:
        from ludwig_nb.engines.builtin.model_io import load_model

        run_dir = Path(self.job.run_dir)
        if self.storage_dir.resolve() != run_dir.resolve():  # bring the results home
            shutil.copytree(self.storage_dir / "model", run_dir / "model", dirs_exist_ok=True)
            stats = self.storage_dir / "training_statistics.json"
            if stats.is_file():
                shutil.copy2(stats, run_dir / "training_statistics.json")
        return load_model(run_dir / "model")
