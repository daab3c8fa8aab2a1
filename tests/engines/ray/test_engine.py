"""engine: ray with real Ray Train (marker ``ray``; scripts/ci/test_ray.sh): a 2-worker
TorchTrainer on CPU (gloo) streaming to the notebook, cooperative Stop, Pause/Resume, force
cancel by a second Stop, a killed worker, resume after a stop and after a crash (checkpoints
on a storage path), the workers' GPUs (the fake NVML on every Ray node) in the run's gauges
and alarms, the throttle's duty on the workers. Every test has a hard timeout; the
session's Ray is shut down at the end and no ``ray::`` process may be left. Scenarios share
runs where they can (CI time)."""

from __future__ import annotations

import json
import os
import signal
import socket

import pytest

pytest.importorskip("ray")

import ludwig_nb
from ludwig_nb.core import events as ev
from ludwig_nb.runs import load_model
from ludwig_nb.runs.monitoring import sampler_of
from tests.engines.ray.conftest import (
    RAY_CPUS,
    fake_gpus,
    ray_children,
    ray_config,
    table,
    wait_for,
)

pytestmark = [pytest.mark.ray, pytest.mark.timeout(420)]


def steps_of(run) -> list[int]:
    return [e.step for e in run.events if isinstance(e, ev.StepFinished)]


def cpus_free(ray) -> bool:
    return ray.available_resources().get("CPU", 0) == RAY_CPUS


def test_two_workers_stream_steps_in_order_and_keep_the_ranks_identical(ray_session, tmp_path):
    """Also: the workers read the CSV path themselves; their node's (fake) GPU reaches the
    run's sampler tagged with the host and the Ray node; the workers row has both ranks."""
    data = table(rows=400)
    data.to_csv(tmp_path / "table.csv", index=False)
    run = ludwig_nb.train(
        ray_config(2),
        tmp_path / "table.csv",
        results_dir=tmp_path,
        registry_dir=tmp_path / "reg",
        wait=True,
    )
    assert run.error is None, run.traceback_text
    assert run.status == "completed"
    started = next(e for e in run.events if isinstance(e, ev.RunStarted))
    assert (started.device, started.device_index) == ("2 × cpu (Ray)", None)
    reported = [e.workers for e in run.events if isinstance(e, ev.WorkersReported)]
    assert [(w["rank"], w["host"], w["device"], w["steps"]) for w in reported[-1]] == [
        (0, socket.gethostname(), "cpu", 18),
        (1, socket.gethostname(), "cpu", 18),
    ]
    assert all(
        w["node_id"] == ray_session.get_runtime_context().get_node_id() for w in reported[-1]
    )
    snapshot = sampler_of(run).latest()  # what the gauges and the alarms read
    assert snapshot is not None and len(snapshot.gpus) == 1  # one node: read once, not per rank
    gpu = snapshot.gpus[0]
    assert (gpu.uuid, gpu.host, gpu.host_index, gpu.temperature) == (
        "GPU-fake-ray-0",
        socket.gethostname(),
        0,
        45,
    )
    assert gpu.node_id == ray_session.get_runtime_context().get_node_id()
    from ludwig_nb.server.runs_view import list_runs  # what the sidebar's route sends

    [summary] = list_runs(tmp_path / "reg")
    assert (summary["run_id"], summary["status"], summary["step"]) == (run.id, "completed", 18)
    assert summary["engine"] == "ray" and summary["problems"] == []
    # 280 training rows (Ludwig's 70% split) -> 140 per rank -> 9 steps of 16 an epoch, 2 epochs
    # (one process would take 18 an epoch)
    assert (started.schedule.steps_per_epoch, started.schedule.total_steps) == (9, 18)
    assert steps_of(run) == list(range(18))  # every step, once, in order, from rank 0
    assert [e.time for e in run.events if isinstance(e, ev.StepFinished)] == sorted(
        e.time for e in run.events if isinstance(e, ev.StepFinished)
    )
    workers = json.loads((run.directory / "workers.json").read_text())["workers"]
    assert [w["rank"] for w in workers] == [0, 1]
    assert {w["steps"] for w in workers} == {18}
    assert workers[0]["parameters_sha256"] == workers[1]["parameters_sha256"]
    assert workers[0]["pid"] != workers[1]["pid"]  # two processes, not one
    model = load_model(run.directory / "model")
    predictions = model.predict(data.head(8))
    assert len(predictions) == 8
    assert (run.directory / "workers" / "rank-1.log").is_file()  # worker output, not the cell
    wait_for(lambda: cpus_free(ray_session), timeout=60)


def idle_on_every_rank(run) -> bool:
    reports = [e.workers for e in run.events if isinstance(e, ev.WorkersReported)]
    return bool(reports) and len(reports[-1]) == 2 and all(w["idle_s"] > 0 for w in reports[-1])


def test_stop_ends_every_rank_at_a_step_boundary_and_resume_continues_there(ray_session, tmp_path):
    """A hot worker GPU and ``action: throttle``: the duty reaches both ranks (each idles);
    the checkpoints go to the storage path; the stopped run resumes from its step."""
    fake_gpus(temperature=88)
    config = ray_config(2, epochs=400, storage_path=str(tmp_path / "shared"))
    config["gpu_watch"] = {
        "alarms": [{"metric": "temperature", "threshold": 80, "action": "throttle"}]
    }
    run = ludwig_nb.train(
        config, table(rows=400), results_dir=tmp_path / "runs", registry_dir=tmp_path / "reg"
    )
    wait_for(lambda: any(isinstance(e, ev.Throttled) and e.duty < 1.0 for e in run.events))
    wait_for(lambda: idle_on_every_rank(run))
    run.stop()
    run.wait(240)
    assert run.is_done
    assert run.error is None, run.traceback_text
    finished = next(e for e in run.events if isinstance(e, ev.RunFinished))
    assert (finished.status, finished.reason) == ("stopped", "stopped by user")
    assert finished.step < run.total_steps
    stored = tmp_path / "shared" / run.id
    assert (stored / "checkpoints" / "latest.ckpt").is_file()  # on the storage path
    assert not (run.directory / "checkpoints" / "latest.ckpt").exists()
    workers = json.loads((run.directory / "workers.json").read_text())["workers"]
    assert len({w["steps"] for w in workers}) == 1  # both ranks stopped before the same step
    assert workers[0]["parameters_sha256"] == workers[1]["parameters_sha256"]
    assert all(w["idle_s"] > 0 for w in workers)  # the throttle's idle time, on every rank
    throttled = next(e for e in run.events if isinstance(e, ev.Throttled) and e.duty < 1.0)
    assert throttled.method == "duty" and throttled.metric == "temperature"
    wait_for(lambda: cpus_free(ray_session), timeout=60)

    fake_gpus(temperature=45)
    again = ludwig_nb.train(
        config,
        table(rows=400),
        results_dir=tmp_path / "runs",
        registry_dir=tmp_path / "reg",
        resume_from=run.directory,
    )
    wait_for(lambda: steps_of(again))
    again.stop()
    again.wait(240)
    assert again.error is None, again.traceback_text
    start = next(e for e in again.events if isinstance(e, ev.RunStarted))
    assert start.start_step == finished.step > 0
    assert steps_of(again)[0] == finished.step  # it goes on where the stop left it
    wait_for(lambda: cpus_free(ray_session), timeout=60)


def test_pause_holds_every_step_until_resume(ray_session, tmp_path):
    run = ludwig_nb.train(
        ray_config(2, epochs=400),
        table(rows=400),
        results_dir=tmp_path,
        registry_dir=tmp_path / "reg",
    )
    wait_for(lambda: steps_of(run))
    run.pause()
    paused = wait_for(lambda: next((e for e in run.events if isinstance(e, ev.Paused)), None))
    run.resume()
    wait_for(
        lambda: any(isinstance(e, ev.StepFinished) and e.step > paused.step for e in run.events)
    )
    run.stop()
    run.wait(240)
    assert run.is_done
    assert run.error is None, run.traceback_text
    kinds = [type(e).__name__ for e in run.events]
    at_pause, at_resume = kinds.index("Paused"), kinds.index("Resumed")
    assert "StepFinished" not in kinds[at_pause:at_resume]  # no rank stepped while paused
    resumed = next(e for e in run.events if isinstance(e, ev.Resumed))
    assert resumed.step == paused.step
    steps = steps_of(run)
    assert steps == list(range(len(steps)))  # none lost or repeated across the pause
    assert run.status == "stopped"


def test_a_second_stop_cancels_the_job_and_frees_the_cpus(ray_session, tmp_path):
    """The ranks are held by a temperature alarm on their node's (fake) GPU, ``action:
    pause``: the pause goes through the channel to every rank, so the first Stop cannot land."""
    fake_gpus(temperature=[45] * 3 + [92])
    config = ray_config(2, epochs=400)
    config["gpu_watch"] = {
        "alarms": [{"metric": "temperature", "threshold": 85, "consecutive": 1, "action": "pause"}]
    }
    run = ludwig_nb.train(
        config, table(rows=400), results_dir=tmp_path, registry_dir=tmp_path / "reg"
    )
    paused = wait_for(lambda: next((e for e in run.events if isinstance(e, ev.Paused)), None))
    assert paused.reason.startswith("alarm:")
    raised = next(e for e in run.events if isinstance(e, ev.AlarmRaised))
    assert raised.action == "pause" and f"on {socket.gethostname()}" in raised.message
    run.stop()
    run.stop()
    run.wait(240)
    assert run.is_done
    assert type(run.error).__name__ == "RunKilled"
    assert "second Stop" in str(run.error)
    assert run.status == "failed"
    wait_for(lambda: cpus_free(ray_session), timeout=60)  # the placement group was released
    from ray.util import placement_group_table

    assert [p for p in placement_group_table().values() if p["state"] == "CREATED"] == []


def test_a_killed_worker_fails_the_run_with_the_error_shown_and_it_resumes(ray_session, tmp_path):
    config = ray_config(2, epochs=400, storage_path=str(tmp_path / "shared"))
    run = ludwig_nb.train(
        config, table(rows=400), results_dir=tmp_path / "runs", registry_dir=tmp_path / "reg"
    )
    saved = wait_for(
        lambda: next((e for e in run.events if isinstance(e, ev.CheckpointSaved)), None)
    )
    workers = ray_children("RayTrainWorker")
    assert len(workers) == 2
    killed = workers[-1].pid
    os.kill(killed, signal.SIGKILL)  # a worker this test's Ray started
    run.wait(240)
    assert run.is_done
    assert run.status == "failed"
    assert type(run.error).__name__ == "WorkerFailed"
    failed = next(e for e in run.events if isinstance(e, ev.RunFailed))
    assert "Ray" in failed.message and "worker logs" in failed.message
    # the rank killed, not its peer that the teardown ended after it reported its own error
    assert f" on {socket.gethostname()} (pid {killed}) is gone" in failed.message
    wait_for(lambda: cpus_free(ray_session), timeout=120)
    # the run cancelled what it started: no worker of it outlives the failure
    wait_for(lambda: not ray_children("RayTrainWorker"))

    again = ludwig_nb.train(
        config,
        table(rows=400),
        results_dir=tmp_path / "runs",
        registry_dir=tmp_path / "reg",
        resume_from=run.directory,
    )
    wait_for(lambda: steps_of(again))
    again.stop()
    again.wait(240)
    assert again.error is None, again.traceback_text
    start = next(e for e in again.events if isinstance(e, ev.RunStarted))
    assert start.start_step > 0 and start.start_step >= saved.step  # not from step 0
    assert steps_of(again)[0] == start.start_step
    wait_for(lambda: cpus_free(ray_session), timeout=120)


def test_losing_a_node_mid_run_fails_the_run_with_the_error_shown(ray_cluster, tmp_path):
    """A fake second node (``ray.cluster_utils.Cluster.add_node``): the workers are spread
    one per node (STRICT_SPREAD), the node is removed after the first steps."""
    import ray

    from tests.engines.ray.conftest import agent_ports

    try:  # the second node loads the fake NVML too: a GPU per node
        node = ray_cluster.add_node(num_cpus=1, env_vars=ray_cluster.fake_nvml_env, **agent_ports())
    except Exception as failure:  # Ray raises a bare Exception when a node does not start
        if "timed out during startup" in str(failure):
            pytest.skip(f"the fake second node did not start on this machine: {failure}")
        raise
    ray_cluster.wait_for_nodes()
    config = ray_config(2, epochs=400)
    config["backend"]["trainer"].update(
        placement_strategy="STRICT_SPREAD", resources_per_worker={"CPU": 1}
    )
    run = ludwig_nb.train(
        config, table(rows=400), results_dir=tmp_path, registry_dir=tmp_path / "reg"
    )
    wait_for(lambda: steps_of(run))
    # each node's GPU, read on that node, one run-wide number each, the node's name shown
    two = wait_for(lambda: (s := sampler_of(run).latest()) is not None and len(s.gpus) == 2 and s)
    assert len({g.node_id for g in two.gpus}) == 2 and [g.index for g in two.gpus] == [0, 1]
    assert len({g.host for g in two.gpus}) == 2  # one machine: the host names carry the node
    ray_cluster.remove_node(node)
    run.wait(300)
    assert run.is_done
    assert run.status == "failed"
    assert type(run.error).__name__ == "WorkerFailed"
    assert "worker logs" in str(run.error)
    wait_for(lambda: ray.available_resources().get("CPU", 0) == RAY_CPUS, timeout=120)


def test_with_max_failures_a_killed_worker_restarts_from_the_last_checkpoint(ray_session, tmp_path):
    config = ray_config(2, epochs=30)
    config["backend"]["trainer"]["max_failures"] = 1
    config["trainer"]["checkpoints_per_epoch"] = 2
    run = ludwig_nb.train(
        config, table(rows=400), results_dir=tmp_path, registry_dir=tmp_path / "reg"
    )
    wait_for(lambda: any(isinstance(e, ev.CheckpointSaved) for e in run.events))
    workers = ray_children("RayTrainWorker")
    os.kill(workers[-1].pid, signal.SIGKILL)
    run.wait(360)
    assert run.error is None, run.traceback_text
    assert run.status == "completed"
    starts = [e for e in run.events if isinstance(e, ev.RunStarted)]
    assert len(starts) == 2 and starts[1].start_step > 0  # resumed, not from step 0
    assert steps_of(run) == list(range(run.total_steps))  # each step once, in order
    wait_for(lambda: cpus_free(ray_session), timeout=60)


def test_use_gpu_without_a_gpu_is_refused_at_its_line_before_anything_starts(ray_session, tmp_path):
    from ludwig_nb.config import ConfigError

    config = (
        "input_features: [{name: x, type: number}]\n"
        "output_features: [{name: y, type: binary}]\n"
        "backend:\n  type: ray\n  trainer: {num_workers: 2, use_gpu: true}\n"
    )
    with pytest.raises(ConfigError) as caught:
        ludwig_nb.train(config, table(), results_dir=tmp_path, registry_dir=tmp_path / "reg")
    assert (caught.value.path, caught.value.line) == ("backend.trainer.use_gpu", 5)
    assert "2 workers x 1 GPU need 2 GPU, and this kernel's Ray has 0" in str(caught.value)
    assert not (tmp_path / "reg").exists() or list((tmp_path / "reg").iterdir()) == []


@pytest.fixture
def cpus_taken(ray_session):
    """Every CPU of the session's Ray held by another job (an actor), so a run's workers wait
    for their placement; released at the end."""

    @ray_session.remote(num_cpus=RAY_CPUS)
    class Holder:
        def ready(self) -> bool:
            return True

    holder = Holder.remote()
    ray_session.get(holder.ready.remote(), timeout=120)
    yield
    ray_session.kill(holder)
    wait_for(lambda: cpus_free(ray_session), timeout=60)


def test_stop_ends_a_run_whose_workers_wait_for_their_placement(cpus_taken, tmp_path):
    run = ludwig_nb.train(
        ray_config(1, epochs=400), table(), results_dir=tmp_path, registry_dir=tmp_path / "reg"
    )
    wait_for(
        lambda: any(  # the workers are being started: Ray waits for a free CPU
            isinstance(e, ev.PhaseChanged) and "Ray Train workers" in (e.detail or "")
            for e in run.events
        )
    )
    run.stop()  # one Stop: nothing trains yet, so it need not be graceful
    run.wait(120)
    assert run.is_done and run.status == "stopped" and run.error is None
    assert not steps_of(run)
    assert not ray_children("RayTrainWorker")


def test_a_placement_that_cannot_be_met_in_time_fails_the_run_saying_what_is_missing(
    cpus_taken, tmp_path, monkeypatch
):
    from ludwig_nb.engines.ray import resources

    monkeypatch.setattr(resources, "PLACEMENT_TIMEOUT_S", 5.0)
    run = ludwig_nb.train(
        ray_config(1), table(), results_dir=tmp_path, registry_dir=tmp_path / "reg"
    )
    run.wait(180)
    assert run.status == "failed" and type(run.error).__name__ == "WorkerFailed"
    message = str(run.error)
    assert message.startswith("Ray could not place the 1 worker in ")
    assert (
        f"each worker needs 1 CPU and the cluster has 0 free of {RAY_CPUS} "
        "(backend.trainer.num_workers); the job was cancelled"
    ) in message
    assert not ray_children("RayTrainWorker")


def test_image_inputs_train_on_two_workers_from_a_csv_of_relative_paths(ray_session, tmp_path):
    """The workers read the CSV, resolve its relative image paths against its folder, check
    and decode the images themselves (one from its disk cache), and train image + number."""
    from ludwig_nb.data.image_datasets import write_shapes

    csv = write_shapes(tmp_path / "shapes", rows=90, size=16)
    config = {
        "input_features": [
            {"name": "image", "type": "image", "preprocessing": {"in_memory": False}},
            {"name": "ink", "type": "number"},
        ],
        "output_features": [{"name": "label", "type": "category"}],
        "trainer": {"epochs": 2, "batch_size": 8, "eval_batch_size": 64},
        "backend": {"type": "ray", "trainer": {"num_workers": 2}},
    }
    run = ludwig_nb.train(
        config, csv, results_dir=tmp_path, registry_dir=tmp_path / "reg", wait=True
    )
    assert run.error is None, run.traceback_text
    assert run.status == "completed"
    started = next(e for e in run.events if isinstance(e, ev.RunStarted))
    assert started.sample_unit == "images"
    steps = [e for e in run.events if isinstance(e, ev.StepFinished)]
    assert steps and all(e.data_wait is not None for e in steps)
    model = load_model(run.directory / "model")
    assert model.metadata["features"]["image"]["height"] == 16
    assert len(model.predict(csv)) == 90  # paths relative to the CSV, here too
