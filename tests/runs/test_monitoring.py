"""runs.monitoring for a run whose GPUs are read on other machines (engine: ray): the run's
sampler is fed by the engine, and the alarms act on the run for those hosts' GPUs."""

from __future__ import annotations

from ludwig_nb.config import load_config
from ludwig_nb.core import events as ev
from ludwig_nb.core.gpu_sample import GpuSample, Snapshot
from ludwig_nb.gpu.remote import RemoteSampler
from ludwig_nb.runs.monitoring import attach, sampler_of
from tests.runs.conftest import ScriptedEngine, make_run

CONFIG = """\
input_features: [{name: x, type: number}]
output_features: [{name: y, type: binary}]
gpu_watch:
  alarms:
    - {metric: temperature, threshold: 80, consecutive: 1, action: pause}
    - {metric: power, threshold: 200, action: throttle, power_limit: true}
"""


def remote(t: float, temperature: float, power: float = 100.0) -> Snapshot:
    gpu = GpuSample(
        index=0,
        temperature=temperature,
        power_draw=power,
        power_limit=300.0,
        host="node-b",
        node_id="n2",
        host_index=3,
        time=t,
    )
    return Snapshot(time=t, gpus=(gpu,))


def test_a_hot_gpu_on_a_worker_s_node_pauses_the_run_until_it_cools(tmp_path):
    engine = ScriptedEngine(gated=True)
    run = make_run(tmp_path, engine)
    job = run._job
    attach(run, load_config(CONFIG), job)
    assert isinstance(sampler_of(run), RemoteSampler) and job.gpu_feed == sampler_of(run).feed
    run.start()
    job.gpu_feed(remote(1.0, 60.0))
    assert not run.control.paused
    job.gpu_feed(remote(2.0, 91.0))
    assert run.control.pause_reasons == frozenset({"alarm:temperature>=80"})
    raised = next(e for e in run.events if isinstance(e, ev.AlarmRaised))
    assert "GPU 3 on node-b" in raised.message and raised.action == "pause"
    job.gpu_feed(remote(3.0, 70.0))
    assert not run.control.paused  # cleared below 75 °C: resumed
    run.stop()
    engine.release(5)
    run.wait(10)
    assert run.is_done and run.status == "stopped"


def test_a_power_cap_on_another_machine_is_refused_and_the_steps_are_spaced(tmp_path):
    run = make_run(tmp_path, ScriptedEngine(gated=True))
    job = run._job
    attach(run, load_config(CONFIG), job)
    for t in range(1, 6):
        job.gpu_feed(remote(float(t), 60.0, power=290.0))
    assert run.control.duty < 1.0  # held by the duty cycle, not a cap set here
    throttled = [e for e in run.events if isinstance(e, ev.Throttled)]
    assert throttled and throttled[-1].method == "duty"
    assert "power cap refused: the GPU is on a Ray worker's node" in throttled[-1].reason
