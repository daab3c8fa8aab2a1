"""The driver's pieces that need no Ray: where a run with a storage path keeps its
checkpoints and how ``resume_from=<run dir>`` finds them; rank 0's RunStarted made the run's."""

from __future__ import annotations

import json

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import RunControl
from ludwig_nb.engines.base import TrainJob
from ludwig_nb.engines.ray.driver import STORED_AT, RayDriver


def job(tmp_path, run_id, storage, resume_from=None):
    config = {
        "backend": {"type": "ray", "storage_path": str(storage), "trainer": {"num_workers": 2}}
    }
    return TrainJob(
        config=config,
        dataset=None,
        run_dir=tmp_path / "runs" / run_id,
        run_id=run_id,
        name="r",
        resume_from=resume_from,
    )


def test_a_stored_run_points_home_and_resume_from_its_directory_finds_the_storage(tmp_path):
    first = RayDriver(job(tmp_path, "run-a", tmp_path / "shared"), lambda e: None, RunControl())
    first._point_home()
    pointer = tmp_path / "runs" / "run-a" / "checkpoints" / STORED_AT
    assert json.loads(pointer.read_text())["run_dir"] == str(tmp_path / "shared" / "run-a")
    again = RayDriver(
        job(tmp_path, "run-b", tmp_path / "shared", tmp_path / "runs" / "run-a"),
        lambda e: None,
        RunControl(),
    )
    assert again._resume_dir() == str(tmp_path / "shared" / "run-a")
    assert again.storage_dir == tmp_path / "shared" / "run-b"  # the new run's own folder


def test_rank_0_s_run_started_names_every_worker_and_no_single_gpu(tmp_path):
    driver = RayDriver(job(tmp_path, "run-c", tmp_path / "s"), lambda e: None, RunControl())
    schedule = ev.ScheduleInfo(total_steps=4, steps_per_epoch=2, epochs=2, batch_size=8)
    started = ev.RunStarted(
        time=1.0,
        run_id="run-c",
        name="r",
        engine="ray",
        device="cuda:0",
        schedule=schedule,
        device_index=0,
    )
    shown = driver._as_run_wide(started)
    assert (shown.device, shown.device_index) == ("2 × cuda (Ray)", None)
    step = ev.StepFinished(time=2.0, step=0, epoch=0, start_time=1.5, batch_size=8, loss=1.0)
    assert driver._as_run_wide(step) is step


def test_a_local_ray_s_dashboard_takes_another_port_when_the_default_is_held():
    import socket

    from ludwig_nb.engines.ray.driver import dashboard_port

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        held = holder.getsockname()[1]
        other = dashboard_port(preferred=held)
        assert other != held and other > 0
    assert dashboard_port(preferred=held) == held  # free again: the preferred one


def _fate_shared_child():
    """A child process that the kernel kills when the thread that started it ends, as Ray's
    node processes are (``PR_SET_PDEATHSIG`` in their ``preexec_fn``)."""
    import ctypes
    import signal
    import subprocess

    libc = ctypes.CDLL(None, use_errno=True)

    def die_with_the_parent_thread() -> None:
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG

    # as Ray does: only the child can ask for its own death signal
    return subprocess.Popen(["sleep", "120"], preexec_fn=die_with_the_parent_thread)  # noqa: PLW1509


def test_a_local_ray_lives_on_a_thread_that_outlives_the_run_that_started_it(monkeypatch):
    """Ray ties a local node's processes to the thread that started them; one started on a run's
    thread died with the run (and the next run ended the process). The kernel's Ray is started
    on a thread that lives as long as the process."""
    import subprocess
    import sys
    import threading
    import types

    import pytest

    from ludwig_nb.engines.ray import driver

    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    children: dict[str, subprocess.Popen] = {}

    def start_a_node(target: str | None) -> None:  # what ray.init does for a local node
        children[threading.current_thread().name] = _fate_shared_child()

    monkeypatch.setattr(driver, "_init", start_a_node)
    monkeypatch.setattr(driver._RayHost, "thread", None)
    monkeypatch.setattr(driver._RayHost, "started_here", False)
    fake_ray = types.SimpleNamespace(is_initialized=lambda: bool(children))
    monkeypatch.setitem(sys.modules, "ray", fake_ray)
    try:
        run_thread = threading.Thread(target=driver.ensure_ray, args=(None,), name="run-1")
        run_thread.start()
        run_thread.join()
        assert list(children) == ["ludwig_nb-ray-host"] and driver._RayHost.started_here
        assert driver.ensure_ray(None) is False  # the next run joins it
        # the same start on a thread that ends: its node dies with it
        direct = threading.Thread(target=start_a_node, args=(None,), name="run-2")
        direct.start()
        direct.join()
        assert children["run-2"].wait(timeout=30) == -9  # killed as its thread ended
        assert children["ludwig_nb-ray-host"].poll() is None  # the kernel's lives on
    finally:
        driver._RayHost.release.set()  # the host thread ends (a kernel's never does)
        if driver._RayHost.thread is not None:
            driver._RayHost.thread.join(timeout=30)
        driver._RayHost.release = threading.Event()  # the next host lives on
        for child in children.values():
            child.kill()
            child.wait()


class _FailingRay:
    """``ray.init`` failing as Ray does: a bare Exception when its node misses the start-up
    wait, a ConnectionError when no cluster answers at the address."""

    def __init__(self, failure: Exception) -> None:
        self.failure, self.inits, self.shutdowns = failure, 0, 0

    def init(self, **_: object) -> None:
        self.inits += 1
        raise self.failure

    def shutdown(self) -> None:
        self.shutdowns += 1


class _RecordingRay:
    """``ray.init`` that starts nothing and keeps what it was asked."""

    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    def init(self, **options: object) -> None:
        self.calls.append(options)


def test_no_address_starts_a_new_local_ray_and_never_joins_one_found_on_the_machine(monkeypatch):
    """Without an address ``ray.init`` joins the cluster in ``/tmp/ray/ray_current_cluster``
    (anyone's ``ray start`` or test cluster) and turns token authentication on for this driver
    alone, so that cluster destroys every actor the run creates before it runs. No address is
    Ray's "local": a Ray of this process's own. An address (or RAY_ADDRESS) is joined as given."""
    import sys

    from ludwig_nb.engines.ray import driver

    ray = _RecordingRay()
    monkeypatch.setitem(sys.modules, "ray", ray)
    monkeypatch.setattr(driver, "dashboard_port", lambda: 8265)
    driver._init(None)
    driver._init("10.0.0.9:6379")
    assert [(call["address"], call.get("dashboard_port")) for call in ray.calls] == [
        ("local", 8265),
        ("10.0.0.9:6379", None),
    ]


def test_a_local_ray_that_never_starts_is_said_plainly_after_its_tries(monkeypatch):
    import sys

    import pytest

    from ludwig_nb.engines.ray import RayNotStarted, driver

    ray = _FailingRay(Exception("The current node timed out during startup. This could..."))
    monkeypatch.setitem(sys.modules, "ray", ray)
    monkeypatch.setattr(driver, "dashboard_port", lambda: 8265)
    with pytest.raises(RayNotStarted) as info:
        driver._init(None)
    assert (ray.inits, ray.shutdowns) == (driver._START_ATTEMPTS, driver._START_ATTEMPTS - 1)
    assert str(info.value) == (
        f"the local Ray did not start: its node missed Ray's start-up wait "
        f"{driver._START_ATTEMPTS} times (The current node timed out during startup. This "
        "could...); this machine is too busy for it now: run again when it is quieter"
    )


def test_a_cluster_that_does_not_answer_is_named_at_once_with_rays_words(monkeypatch):
    import sys

    import pytest

    from ludwig_nb.engines.ray import RayNotStarted, driver

    ray = _FailingRay(ConnectionError("Could not find any running Ray instance.\nmore"))
    monkeypatch.setitem(sys.modules, "ray", ray)
    with pytest.raises(RayNotStarted) as info:
        driver._init("10.0.0.9:6379")
    assert ray.inits == 1  # an address that does not answer is not a busy machine: no retry
    assert str(info.value) == (
        "could not connect to the Ray cluster at '10.0.0.9:6379' (backend.address, or the "
        "RAY_ADDRESS environment variable): Could not find any running Ray instance."
    )


def test_a_start_that_timed_out_leaves_no_ray_process_before_the_next_try(monkeypatch, tmp_path):
    """``ray.shutdown`` after a node that missed its start-up wait leaves its GCS, dashboard
    and monitors running; they are ended before the next try, and nothing else is."""
    import subprocess
    import sys

    from ludwig_nb.engines.ray import driver

    fake_gcs = tmp_path / "ray" / "gcs_server"  # a path such as Ray's binaries have
    fake_gcs.parent.mkdir()
    fake_gcs.write_text("import time\ntime.sleep(120)\n")
    started: list[subprocess.Popen] = []

    class TimingOutOnce(_FailingRay):
        def init(self, **_: object) -> None:
            self.inits += 1
            if self.inits == 1:
                started.append(subprocess.Popen([sys.executable, str(fake_gcs)]))
                started.append(subprocess.Popen(["sleep", "120"]))  # not Ray's: left alone
                raise self.failure

    ray = TimingOutOnce(Exception("The current node timed out during startup."))
    monkeypatch.setitem(sys.modules, "ray", ray)
    monkeypatch.setattr(driver, "dashboard_port", lambda: 8265)
    try:
        driver._init(None)
        gcs, other = started
        assert (ray.inits, ray.shutdowns) == (2, 1)
        assert gcs.poll() is not None  # ended before the second try
        assert other.poll() is None
    finally:
        for child in started:
            child.kill()
            child.wait()


def _beat(rank: int, pid: int, time: float) -> dict[str, object]:
    return {"rank": rank, "host": "node-a", "pid": pid, "time": time}


def test_the_rank_killed_first_is_named_though_the_teardown_ended_its_peer_too():
    """Rank 1 is killed; rank 0's collective fails, it reports its error and the job's teardown
    ends it: both processes are gone when the driver looks. Rank 0 reported its own error, so it
    was alive after rank 1 died (its heartbeat even stopped earlier: it was stuck waiting)."""
    from ludwig_nb.engines.ray.driver import _first_dead

    reports = [_beat(0, 100, 9.5), _beat(1, 101, 10.0)]
    first = _first_dead(reports, reported={0}, lost=set(), gone=lambda report: True)
    assert first is not None and (first["rank"], first["pid"]) == (1, 101)


def test_a_rank_ray_found_dead_comes_before_any_gone_by_the_teardown():
    from ludwig_nb.engines.ray.driver import _first_dead

    reports = [_beat(0, 100, 5.0), _beat(1, 101, 10.0)]  # neither reported (both killed)
    first = _first_dead(reports, reported=set(), lost={1}, gone=lambda report: True)
    assert first is not None and first["rank"] == 1


def test_among_several_silent_dead_ranks_the_one_that_stopped_beating_first_is_named():
    """Three ranks: rank 2 killed, rank 0 failed in the collective and reported it, rank 1 was
    ended by the teardown before it noticed (silent too, but it beat on until then)."""
    from ludwig_nb.engines.ray.driver import _first_dead

    reports = [_beat(0, 100, 9.8), _beat(1, 101, 10.4), _beat(2, 102, 9.1)]
    first = _first_dead(reports, reported={0}, lost=set(), gone=lambda report: True)
    assert first is not None and first["rank"] == 2


def test_no_rank_is_named_gone_when_every_rank_failed_on_its_own():
    """A training error in every rank, then the teardown: the processes are gone, but each
    reported its error first. Nothing was killed: the error shown is the ranks' own."""
    from ludwig_nb.engines.ray.driver import _first_dead

    reports = [_beat(0, 100, 9.0), _beat(1, 101, 9.0)]
    assert _first_dead(reports, reported={0, 1}, lost=set(), gone=lambda report: True) is None
    alive = _first_dead(reports, reported=set(), lost=set(), gone=lambda report: False)
    assert alive is None  # nothing gone, nothing lost


class _ActorDied(Exception):
    """Ray's ``RayActorError`` at the seam."""


class _HealthCheckFailed(Exception):
    """Ray Train's failed poll of a rank: Ray's error kept as ``health_check_failure``."""

    def __init__(self, failure: BaseException) -> None:
        super().__init__("A worker health check failed.")
        self.health_check_failure = failure


class _WorkerGroupError(Exception):
    def __init__(self, worker_failures: dict[int, BaseException]) -> None:
        super().__init__("Training failed due to worker errors")
        self.worker_failures = worker_failures


class _TaskError(Exception):
    """Ray's task error around what the task raised (``cause``)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def test_the_ranks_ray_found_dead_are_read_from_the_error_the_job_raised():
    from ludwig_nb.engines.ray.driver import _ranks_ray_lost

    group = _WorkerGroupError(
        {
            0: RuntimeError("gloo: connection closed by peer"),  # the peer's own failure
            1: _HealthCheckFailed(_ActorDied("The actor died unexpectedly")),
            2: _HealthCheckFailed(TimeoutError("hanging")),  # hung, not known dead
        }
    )
    assert _ranks_ray_lost(_TaskError(group), _ActorDied) == {1}
    assert _ranks_ray_lost(group, _ActorDied) == {1}  # Ray's error class that is the cause too
    assert _ranks_ray_lost(_TaskError(RuntimeError("no ranks here")), _ActorDied) == set()
    assert _ranks_ray_lost(None, _ActorDied) == set()
