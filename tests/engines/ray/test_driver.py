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
