"""AlarmWatch: alarm transitions applied to runs through RunControl, and a real torch loop
paused by a hot simulated GPU and resumed after it cooled, on virtual time."""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ludwig_nb.core.alarms import AlarmPolicy, AlarmRule, Threshold
from ludwig_nb.core.control import RunControl
from ludwig_nb.core.events import AlarmCleared, AlarmRaised, Event, Paused, Resumed
from ludwig_nb.core.gpu_sample import GpuSample, Snapshot
from ludwig_nb.gpu import Sampler, SimulatedGpu, ThermalProfile
from ludwig_nb.runs.alarm_watch import AlarmWatch, pause_reason

LOOP_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "nvml" / "loop.py"


def load_loop() -> ModuleType:
    spec = importlib.util.spec_from_file_location("nvml_fixture_loop", LOOP_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class Target:
    def __init__(self, device_index: int | None = 0, active: bool = True) -> None:
        self.control = RunControl()
        self.device_index = device_index
        self.uses_gpu = True  # a run training on a GPU
        self.is_active = active
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


class StubSampler:
    def __init__(self) -> None:
        self.callbacks: list[Callable[[Snapshot], object]] = []

    def subscribe(self, callback: Callable[[Snapshot], object]) -> Callable[[], None]:
        self.callbacks.append(callback)
        return lambda: self.callbacks.remove(callback)


def hot(*temps: float, t: float = 0.0) -> Snapshot:
    return Snapshot(
        time=t, gpus=tuple(GpuSample(index=i, temperature=x) for i, x in enumerate(temps))
    )


def watch_for(action: str, targets: list[Target]) -> AlarmWatch:
    rule = AlarmRule("temperature", Threshold(85.0), consecutive=1, action=action, name="hot")
    return AlarmWatch(
        StubSampler(), AlarmPolicy([rule]), lambda: targets, clock=lambda: 123.0
    ).start()


def test_pause_until_cleared_then_resume() -> None:
    run, other_gpu = Target(0), Target(1)
    watch = watch_for("pause", [run, other_gpu])
    watch.on_snapshot(hot(90.0, 40.0))
    assert run.control.pause_reasons == {"alarm:hot"} and not other_gpu.control.paused
    (raised,) = run.events
    assert isinstance(raised, AlarmRaised)
    assert (
        raised.rule,
        raised.device,
        raised.value,
        raised.threshold,
        raised.action,
        raised.time,
    ) == ("hot", 0, 90.0, 85.0, "pause", 123.0)
    watch.on_snapshot(hot(82.0, 40.0))  # above the clear level (80): still paused
    assert run.control.paused
    watch.on_snapshot(hot(70.0, 40.0))
    assert not run.control.paused
    assert isinstance(run.events[-1], AlarmCleared) and run.events[-1].value == 70.0
    assert other_gpu.events == []
    assert [c.raised for c in watch.log] == [True, False]


def test_a_run_on_every_gpu_resumes_only_when_all_have_cooled() -> None:
    run = Target(device_index=None)
    watch = watch_for("pause", [run])
    watch.on_snapshot(hot(90.0, 90.0))
    assert run.control.pause_reasons == {pause_reason("hot")}
    watch.on_snapshot(hot(70.0, 90.0))
    assert run.control.paused  # GPU 1 is still hot
    watch.on_snapshot(hot(70.0, 70.0))
    assert not run.control.paused
    assert [type(e).__name__ for e in run.events] == ["AlarmRaised"] * 2 + ["AlarmCleared"] * 2


def test_a_user_pause_outlives_the_alarm() -> None:
    run = Target(0)
    watch = watch_for("pause", [run])
    watch.on_snapshot(hot(90.0))
    run.control.pause("user")
    watch.on_snapshot(hot(60.0))
    assert run.control.pause_reasons == {"user"}


def test_stop_and_warn_actions() -> None:
    stopped, warned = Target(0), Target(0)
    watch_for("stop", [stopped]).on_snapshot(hot(91.0))
    assert stopped.control.stop_requested and not stopped.control.paused
    assert stopped.control.stop_reason == "alarm: GPU 0 at 91°C (alarm at 85°C): stop"
    watch_for("warn", [warned]).on_snapshot(hot(91.0))
    assert not warned.control.stop_requested and not warned.control.paused
    assert [e.type for e in warned.events] == ["alarm_raised"]


def test_inactive_runs_are_left_alone_and_late_runs_are_caught_up() -> None:
    finished, late = Target(0, active=False), Target(0)
    targets = [finished]
    rule = AlarmRule("temperature", Threshold(85.0), consecutive=1, action="pause", name="hot")
    watch = AlarmWatch(StubSampler(), AlarmPolicy([rule]), lambda: targets)
    watch.on_snapshot(hot(90.0))
    assert not finished.control.paused and finished.events == []
    targets.append(late)  # starts while the GPU is still hot
    watch.on_snapshot(hot(88.0))
    assert late.control.paused
    (event,) = late.events
    assert isinstance(event, AlarmRaised) and "already up" in event.message and event.value == 88.0
    watch.on_snapshot(hot(60.0))
    assert not late.control.paused


def test_a_late_run_hears_the_gpus_own_margin_as_a_fresh_alarm_gives_it() -> None:
    """A run that starts while the alarm is up words its pause from the same facts (the
    GPU's thermal margin), not from the threshold alone."""
    early, late = Target(0), Target(0)
    targets = [early]
    watch = watch_for("pause", targets)
    margin = Snapshot(
        time=0.0, gpus=(GpuSample(index=0, temperature=88.0, temperature_margin=-1.0),)
    )
    watch.on_snapshot(margin)
    targets.append(late)
    watch.on_snapshot(margin)
    (fresh,) = early.events
    (caught_up,) = late.events
    assert isinstance(fresh, AlarmRaised) and isinstance(caught_up, AlarmRaised)
    assert fresh.margin == caught_up.margin == -1.0
    assert fresh.clear == caught_up.clear


@pytest.mark.parametrize("action", ["pause", "stop", "throttle"])
def test_a_gpus_alarm_never_acts_on_a_run_on_the_cpu(action: str) -> None:
    on_cpu, on_gpu = Target(None), Target(0)
    on_cpu.uses_gpu = False
    watch = watch_for(action, [on_cpu, on_gpu])
    for t in range(6):
        watch.on_snapshot(hot(99.0, t=float(t)))
    assert on_cpu.events == [] and not on_cpu.control.paused
    assert not on_cpu.control.stop_requested and on_cpu.control.duty == 1.0
    assert on_gpu.events  # the GPU's own run is acted on
    own = AlarmWatch(
        StubSampler(), AlarmPolicy(list(watch.policy.rules)), lambda: [on_cpu], own_gpu=True
    )
    own.on_snapshot(hot(99.0))  # a simulated card stands for the CPU run's device
    assert on_cpu.events


def test_a_run_whose_device_is_not_known_yet_is_caught_when_it_starts_on_a_gpu() -> None:
    starting, cpu_later = Target(None), Target(None)
    starting.uses_gpu = cpu_later.uses_gpu = None  # preprocessing: no RunStarted yet
    watch = watch_for("stop", [starting, cpu_later])
    watch.on_snapshot(hot(95.0, t=0.0))
    assert not starting.control.stop_requested and not cpu_later.control.stop_requested
    starting.uses_gpu, starting.device_index = True, 0  # RunStarted: cuda:0
    cpu_later.uses_gpu = False  # RunStarted: cpu
    watch.on_snapshot(hot(95.0, t=1.0))
    assert starting.control.stop_requested
    assert "already up when the run started" in starting.control.stop_reason
    assert [e.type for e in starting.events] == ["alarm_raised"]
    watch.on_snapshot(hot(96.0, t=2.0))  # acted on once
    assert len(starting.events) == 1
    assert not cpu_later.control.stop_requested and cpu_later.events == []


def test_stopping_the_watch_releases_its_pauses_and_unsubscribes() -> None:
    run = Target(0)
    sampler = StubSampler()
    rule = AlarmRule("temperature", Threshold(85.0), consecutive=1, action="pause")
    watch = AlarmWatch(sampler, AlarmPolicy([rule]), lambda: [run]).start()
    assert len(sampler.callbacks) == 1
    sampler.callbacks[0](hot(90.0))
    assert run.control.paused
    watch.stop()
    assert not run.control.paused and sampler.callbacks == []


def test_a_run_whose_emit_fails_does_not_block_the_others() -> None:
    broken, fine = Target(0), Target(0)

    def explode(event: Event) -> None:
        raise RuntimeError("queue closed")

    broken.emit = explode  # type: ignore[method-assign]
    watch_for("pause", [broken, fine]).on_snapshot(hot(90.0))
    assert broken.control.paused and fine.control.paused and len(fine.events) == 1


def test_hot_simulated_gpu_pauses_a_real_torch_loop_until_it_cools() -> None:
    pytest.importorskip("torch")
    loop = load_loop()
    holder: list[object] = []
    vt = loop.VirtualTime(paused=lambda: bool(holder) and holder[0].waiting)
    run = loop.TinyRun(vt, device_index=0)
    holder.append(run)
    gpu = SimulatedGpu(
        load=lambda: 1.0 if run.busy else 0.0, profile=ThermalProfile.demo(), clock=vt.clock
    )
    sampler = Sampler(gpu, None, clock=vt.clock, sleep=vt.sleep)
    rule = AlarmRule.from_config({"threshold": "slowdown-5", "action": "pause", "consecutive": 3})
    watch = AlarmWatch(sampler, AlarmPolicy([rule]), lambda: [run], clock=vt.clock).start()
    resumed_and_trained = threading.Event()

    def after_step(r: object) -> None:
        pauses = [e.step for e in list(run.events) if isinstance(e, Paused)]
        if "resumed" in run.event_types() and run.steps >= pauses[0] + 20:
            run.control.stop("test done")
            resumed_and_trained.set()

    run.after_step = after_step
    sampler_thread = threading.Thread(target=sampler.run, daemon=True)
    sampler_thread.start()
    trainer = threading.Thread(target=run.train, args=(2000,), daemon=True)
    trainer.start()
    try:
        assert resumed_and_trained.wait(60.0), run.event_types()[-5:]
        trainer.join(10.0)
    finally:
        run.control.stop("test teardown")
        vt.close()
        sampler.stop()
        watch.stop(release=False)
        sampler_thread.join(5.0)
    assert not trainer.is_alive()
    events = [e for e in run.events if e.type != "step_finished"]
    assert [e.type for e in events[:4]] == ["alarm_raised", "paused", "alarm_cleared", "resumed"]
    raised, paused, cleared, resumed = events[:4]
    assert isinstance(raised, AlarmRaised) and raised.value >= 82.0  # slowdown 87 - 5
    assert isinstance(cleared, AlarmCleared) and cleared.value < 77.0  # clears at slowdown-10
    assert isinstance(paused, Paused) and isinstance(resumed, Resumed)
    assert paused.reason == "alarm:temperature>=slowdown-5"
    assert paused.step == resumed.step  # no step ran while paused
    assert resumed.time > paused.time  # the pause lasted virtual seconds while it cooled
    assert run.steps >= paused.step + 20  # and training went on after the resume
    assert run.losses[-1] < 0.2 * run.losses[0]


class EngineTarget:
    """An ``AlarmTarget`` around a built-in engine run, on virtual time (test only)."""

    def __init__(self, vt: Any, step_seconds: float) -> None:
        self.control = RunControl()
        self.device_index = 0
        self.is_active = True
        self.events: list[Event] = []
        self.waiting = False
        self.steps_after_resume = 0
        self._vt, self._step_seconds = vt, step_seconds
        self._lock = threading.Lock()

    def emit(self, event: Event) -> None:
        with self._lock:
            self.events.append(event)
        if isinstance(event, Paused):
            self.waiting = True
        elif isinstance(event, Resumed):
            self.waiting = False
        elif event.type == "step_finished":
            self._vt.step(self._step_seconds)  # training thread: time passes with the steps
            if any(isinstance(e, Resumed) for e in self.events):
                self.steps_after_resume += 1
                if self.steps_after_resume >= 5:
                    self.control.stop("test done")


def test_hot_simulated_gpu_pauses_the_builtin_engine_until_it_cools(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    numpy = pytest.importorskip("numpy")
    pandas = pytest.importorskip("pandas")
    from ludwig_nb.config import load_config
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.engines.builtin import BuiltinEngine

    loop = load_loop()
    holder: list[EngineTarget] = []
    vt = loop.VirtualTime(
        paused=lambda: bool(holder) and holder[0].waiting and holder[0].control.paused
    )
    target = EngineTarget(vt, step_seconds=1.0)
    holder.append(target)
    gpu = SimulatedGpu(
        load=lambda: 0.0 if target.waiting else 1.0, profile=ThermalProfile.demo(), clock=vt.clock
    )
    sampler = Sampler(gpu, None, clock=vt.clock, sleep=vt.sleep)
    rule = AlarmRule.from_config({"threshold": "slowdown-5", "action": "pause", "consecutive": 2})
    watch = AlarmWatch(
        sampler, AlarmPolicy([rule]), lambda: [target], clock=vt.clock, own_gpu=True
    ).start()  # the simulated card stands for the device the run trains on (the CPU here)
    x = numpy.random.default_rng(0).normal(size=200)
    data = pandas.DataFrame({"x": x, "y": 2.0 * x + 1.0})
    config = load_config(
        {
            "input_features": [{"name": "x", "type": "number"}],
            "output_features": [{"name": "y", "type": "number"}],
            "trainer": {"epochs": 40, "batch_size": 16, "learning_rate": 0.01},
        }
    ).to_dict()
    job = TrainJob(
        config=config, dataset=data, run_dir=tmp_path, run_id="r1", name="hot", clock=vt.clock
    )
    sampler_thread = threading.Thread(target=sampler.run, daemon=True)
    sampler_thread.start()
    try:
        BuiltinEngine().fit(job, target.emit, target.control)
    finally:
        vt.close()
        sampler.stop()
        watch.stop(release=False)
        sampler_thread.join(5.0)
    kinds = [
        e.type
        for e in target.events
        if e.type in {"alarm_raised", "paused", "alarm_cleared", "resumed"}
    ]
    assert kinds[:4] == ["alarm_raised", "paused", "alarm_cleared", "resumed"]
    paused = next(e for e in target.events if isinstance(e, Paused))
    resumed = next(e for e in target.events if isinstance(e, Resumed))
    assert paused.reason == "alarm:temperature>=slowdown-5" and paused.step == resumed.step
    assert target.steps_after_resume >= 5
    assert (
        target.events[-1].type == "run_finished"
        and getattr(target.events[-1], "status", "") == "stopped"
    )
