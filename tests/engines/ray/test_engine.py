"""engine: ray with real Ray Train (marker ``ray``; scripts/test_ray.sh): local mode on the
real loop, a 2-worker TorchTrainer on CPU (gloo) streaming to the notebook, cooperative
Stop, Pause/Resume, force cancel by a second Stop, a killed worker. Every test has a hard
timeout; the session's Ray is shut down at the end and no ``ray::`` process may be left."""

from __future__ import annotations

import json
import os
import signal

import pytest

pytest.importorskip("ray")

import ludwig_nb
from ludwig_nb.core import events as ev
from ludwig_nb.runs import load_model
from tests.engines.ray.conftest import RAY_CPUS, ray_children, ray_config, table, wait_for

pytestmark = [pytest.mark.ray, pytest.mark.timeout(420)]


def steps_of(run) -> list[int]:
    return [e.step for e in run.events if isinstance(e, ev.StepFinished)]


def cpus_free(ray) -> bool:
    return ray.available_resources().get("CPU", 0) == RAY_CPUS


def test_local_mode_runs_the_worker_code_in_process(tmp_path):
    import ray

    data = table(rows=200)
    run = ludwig_nb.train(
        ray_config(0), data, results_dir=tmp_path, registry_dir=tmp_path / "reg", wait=True
    )
    assert run.error is None, run.traceback_text
    assert (run.engine_name, run.status) == ("ray", "completed")
    started = next(e for e in run.events if isinstance(e, ev.RunStarted))
    assert started.engine == "ray"
    # one rank: the whole table, the built-in loop's own plan (140 training rows / 16)
    assert steps_of(run) == list(range(run.total_steps))
    assert run.total_steps == started.schedule.total_steps
    workers = json.loads((run.directory / "workers.json").read_text())["workers"]
    assert [w["rank"] for w in workers] == [0]
    assert len(load_model(run.directory / "model").predict(data.head(5))) == 5
    if not ray.is_initialized():  # local mode does not start Ray
        assert ray_children() == []


def test_two_workers_stream_steps_in_order_and_keep_the_ranks_identical(ray_session, tmp_path):
    data = table(rows=400)
    run = ludwig_nb.train(
        ray_config(2), data, results_dir=tmp_path, registry_dir=tmp_path / "reg", wait=True
    )
    assert run.error is None, run.traceback_text
    assert run.status == "completed"
    started = next(e for e in run.events if isinstance(e, ev.RunStarted))
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


def test_stop_ends_every_rank_at_a_step_boundary(ray_session, tmp_path):
    run = ludwig_nb.train(
        ray_config(2, epochs=400),
        table(rows=400),
        results_dir=tmp_path,
        registry_dir=tmp_path / "reg",
    )
    wait_for(lambda: steps_of(run))
    run.stop()
    run.wait(240)
    assert run.is_done
    assert run.error is None, run.traceback_text
    finished = next(e for e in run.events if isinstance(e, ev.RunFinished))
    assert (finished.status, finished.reason) == ("stopped", "stopped by user")
    assert finished.step < run.total_steps
    assert (run.directory / "checkpoints" / "latest.ckpt").is_file()
    workers = json.loads((run.directory / "workers.json").read_text())["workers"]
    assert len({w["steps"] for w in workers}) == 1  # both ranks stopped before the same step
    assert workers[0]["parameters_sha256"] == workers[1]["parameters_sha256"]
    wait_for(lambda: cpus_free(ray_session), timeout=60)


def test_pause_holds_every_step_until_resume(ray_session, tmp_path):
    run = ludwig_nb.train(ray_config(2, epochs=400), table(rows=400), results_dir=tmp_path,
                          registry_dir=tmp_path / "reg")  # fmt: skip
    wait_for(lambda: steps_of(run))
    run.pause()
    paused = wait_for(lambda: next((e for e in run.events if isinstance(e, ev.Paused)), None))
    run.resume()
    wait_for(lambda: any(isinstance(e, ev.StepFinished) and e.step > paused.step
                         for e in run.events))  # fmt: skip
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
    run = ludwig_nb.train(
        ray_config(2, epochs=400),
        table(rows=400),
        results_dir=tmp_path,
        registry_dir=tmp_path / "reg",
    )
    wait_for(lambda: steps_of(run))
    run.control.pause("test")  # hold the ranks so that the first Stop cannot land
    wait_for(lambda: any(isinstance(e, ev.Paused) for e in run.events))
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


def test_a_killed_worker_fails_the_run_with_the_error_shown(ray_session, tmp_path):
    run = ludwig_nb.train(
        ray_config(2, epochs=400),
        table(rows=400),
        results_dir=tmp_path,
        registry_dir=tmp_path / "reg",
    )
    wait_for(lambda: steps_of(run))
    workers = [p for p in ray_children() if "RayTrainWorker" in " ".join(p.cmdline())]
    assert len(workers) == 2
    os.kill(workers[-1].pid, signal.SIGKILL)  # a worker this test's Ray started
    run.wait(240)
    assert run.is_done
    assert run.status == "failed"
    assert type(run.error).__name__ == "WorkerFailed"
    failed = next(e for e in run.events if isinstance(e, ev.RunFailed))
    assert "Ray" in failed.message and "worker logs" in failed.message
    wait_for(lambda: cpus_free(ray_session), timeout=120)


def test_losing_a_node_mid_run_fails_the_run_with_the_error_shown(ray_cluster, tmp_path):
    """A fake second node (``ray.cluster_utils.Cluster.add_node``): the workers are spread
    one per node (STRICT_SPREAD), the node is removed after the first steps."""
    import ray

    from tests.engines.ray.conftest import agent_ports

    try:
        node = ray_cluster.add_node(num_cpus=1, **agent_ports())
    except Exception as failure:  # Ray raises a bare Exception when a node does not start
        if "timed out during startup" in str(failure):
            pytest.skip(f"the fake second node did not start on this machine: {failure}")
        raise
    ray_cluster.wait_for_nodes()
    config = ray_config(2, epochs=400)
    config["backend"]["trainer"].update(placement_strategy="STRICT_SPREAD",
                                        resources_per_worker={"CPU": 1})  # fmt: skip
    run = ludwig_nb.train(config, table(rows=400), results_dir=tmp_path,
                          registry_dir=tmp_path / "reg")  # fmt: skip
    wait_for(lambda: steps_of(run))
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
    run = ludwig_nb.train(config, table(rows=400), results_dir=tmp_path,
                          registry_dir=tmp_path / "reg")  # fmt: skip
    wait_for(lambda: any(isinstance(e, ev.CheckpointSaved) for e in run.events))
    workers = [p for p in ray_children() if "RayTrainWorker" in " ".join(p.cmdline())]
    os.kill(workers[-1].pid, signal.SIGKILL)
    run.wait(360)
    assert run.error is None, run.traceback_text
    assert run.status == "completed"
    starts = [e for e in run.events if isinstance(e, ev.RunStarted)]
    assert len(starts) == 2 and starts[1].start_step > 0  # resumed, not from step 0
    assert steps_of(run) == list(range(run.total_steps))  # each step once, in order
    wait_for(lambda: cpus_free(ray_session), timeout=60)
