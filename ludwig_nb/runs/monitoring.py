"""Wire a run to GPU telemetry and temperature alarms, per its ``gpu_watch:`` section.

``enabled: auto`` watches when NVML finds a GPU; ``simulate: true`` puts a
``SimulatedGpu`` (whose temperature follows the run's load) in place of the driver, so an
alarm can pause a real run on a machine without a GPU.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from ludwig_nb.config import Config
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.gpu import Sampler
    from ludwig_nb.runs.run import Run

__all__ = ["attach", "keep_kernel_sampler", "release_kernel_sampler", "sampler_of"]

log = logging.getLogger(__name__)

#: the sampler watching each run (kept here, not on the run: a view gets it as an argument)
_samplers: weakref.WeakKeyDictionary[Run, Sampler] = weakref.WeakKeyDictionary()


def sampler_of(run: Run) -> Sampler | None:
    """The GPU/host sampler :func:`attach` gave ``run``.

    Its own simulated one, or the kernel's; None when its ``gpu_watch`` is off. Pass it to the
    view that shows the run.
    """
    return _samplers.get(run)


class _KernelWatches:
    """Runs whose alarms listen to the kernel's shared sampler.

    While one is active, the sampler must not stop (a "stop at 90 °C" run must not train on,
    unwatched, after ``%unload_ext``).
    """

    lock = threading.Lock()
    runs: ClassVar[set[Run]] = set()
    release_pending = False


def release_kernel_sampler() -> list[Run]:
    """Stop the kernel's GPU sampler, now or when the last listening run ends.

    Stop the kernel's GPU sampler now, or, while active runs' alarms listen to it, as soon as the
    last of them ends. Returns those runs (empty: stopped now).
    """
    from ludwig_nb.gpu import stop_kernel_sampler

    with _KernelWatches.lock:
        watching = [r for r in _KernelWatches.runs if r.is_active]
        _KernelWatches.release_pending = bool(watching)
    if not watching:
        stop_kernel_sampler()
    return watching


def keep_kernel_sampler() -> None:
    """Cancel a pending :func:`release_kernel_sampler` (the extension was loaded again)."""
    with _KernelWatches.lock:
        _KernelWatches.release_pending = False


def _unwatch(run: Run) -> None:
    from ludwig_nb.gpu import stop_kernel_sampler

    with _KernelWatches.lock:
        _KernelWatches.runs.discard(run)
        last = _KernelWatches.release_pending and not any(r.is_active for r in _KernelWatches.runs)
        if last:
            _KernelWatches.release_pending = False
    if last:
        stop_kernel_sampler()


_LOADED_STATUSES = frozenset({"training", "evaluating", "preprocessing"})


def _section(cfg: Config) -> Mapping[str, Any]:
    section = cfg.to_dict().get("gpu_watch") or {}
    return section if isinstance(section, Mapping) else {}


def _profile(simulate: object) -> Any:
    """``simulate: true`` -> a realistic card.

    ``"demo"`` -> fast time constants (a pause and a resume within half a minute); a mapping ->
    ``ThermalProfile`` fields.
    """
    from ludwig_nb.gpu import ThermalProfile

    if simulate == "demo":
        return ThermalProfile.demo()
    if isinstance(simulate, Mapping):
        return ThermalProfile(**simulate)  # numbers, and the generation's name
    return ThermalProfile()


def _profile_run(run: Run, sampler: object) -> None:
    """Give a run a resource profile from the sampler it already has.

    Without a sampler, phases and steps only; it is written as system_resource_usage.json when the
    run ends.
    """
    from ludwig_nb.runs.profile import ResourceProfile

    devices = run.engine.devices()
    profile = run.resources = ResourceProfile(run, sampler, devices=devices).start()

    def write(_: Run) -> None:
        profile.close()
        profile.write()

    run.add_result_writer(write)


def _watch_deadline(run: Run, section: Mapping[str, Any], sampler: object | None) -> None:
    """Give ``run`` its deadline watch when it has a deadline (config, kernel, env, Colab)."""
    from ludwig_nb.runs.deadline_sources import resolve_deadline
    from ludwig_nb.runs.deadline_watch import DeadlineWatch

    deadline = resolve_deadline(section.get("deadline", None), run_start=run.clock())
    if deadline is None:
        return
    watch = run.deadline_watch = DeadlineWatch(run, deadline, clock=run.clock)
    run.add_listener(watch.on_event)
    subscribe = getattr(sampler, "subscribe", None)
    unsubscribe = None if subscribe is None else subscribe(watch.on_snapshot)

    def _detach(_: Run) -> None:
        watch.close()
        if unsubscribe is not None:
            unsubscribe()

    run.add_finish_callback(_detach)


def _watch_slowdown(run: Run, sampler: Any) -> None:
    """Count the time the run's GPUs lose to throttling (the ETA and the views read it)."""
    from ludwig_nb.runs.slowdown_watch import SlowdownWatch

    watch = run.slowdown_watch = SlowdownWatch(sampler, run)
    run.add_finish_callback(lambda _: watch.close())


def attach(run: Run, cfg: Config, remote: TrainJob | None = None) -> None:
    """Give ``run`` a sampler, an alarm watch and a deadline watch as its config asks.

    ``remote``: the job of an engine whose workers read their nodes' GPUs (engine: ray):
    the run's sampler is then fed with their readings (``job.gpu_feed``), and its alarms
    act on the GPUs the workers use, on whichever host.
    """
    section = _section(cfg)
    enabled = section.get("enabled", "auto")
    if enabled is False:
        _profile_run(run, None)
        _watch_deadline(run, section, None)
        return
    simulate = section.get("simulate") or False
    if remote is not None and not simulate:
        _attach_remote(run, section, remote)
        return
    from ludwig_nb.core.alarms import AlarmPolicy
    from ludwig_nb.gpu import HostSource, Sampler, SimulatedGpu, kernel_sampler
    from ludwig_nb.runs.alarm_watch import AlarmWatch

    owned = bool(simulate)
    if simulate:
        source = SimulatedGpu(
            # the card works the run's duty cycle (the throttle spaces the steps)
            load=lambda: run.control.duty if run.status in _LOADED_STATUSES else 0.0,
            profile=_profile(simulate),
        )
        sampler = Sampler(source, HostSource(), interval=float(section.get("interval", 1.0)))
        sampler.start()
        run.device_index = 0
    else:
        sampler = kernel_sampler()
    _samplers[run] = sampler
    _profile_run(run, sampler)
    _watch_deadline(run, section, sampler)
    if not simulate and not sampler.gpu_available:
        why = sampler.reason or "no GPU found"
        _say_alarms_cannot_act(cfg, f"no GPU to watch here ({why})")
        if enabled == "auto":
            return  # host CPU/RAM for the dashboard; no GPU to raise alarms on
    elif not simulate and run.uses_gpu is False:
        _say_alarms_cannot_act(cfg, "this run trains on the CPU (its device)")
    _watch_slowdown(run, sampler)
    policy = AlarmPolicy.from_config(section)
    watch = AlarmWatch(sampler, policy, targets=lambda: [run], own_gpu=owned).start()
    if not owned:
        with _KernelWatches.lock:
            _KernelWatches.runs.add(run)

    def _detach(_: Run) -> None:
        watch.close()
        if owned:
            sampler.stop()
        else:
            _unwatch(run)

    run.add_finish_callback(_detach)


def _say_alarms_cannot_act(cfg: Config, why: str) -> None:
    """Warn, at each alarm the config wrote, that it cannot act on this run (``ConfigWarning``).

    The default alarm is silent, also when a rendered config (a run's ``config.yaml``) writes
    it out: only what the user asked for deserves the word.
    """
    import warnings

    from ludwig_nb.config import ConfigWarning

    written = (cfg.written or {}).get("gpu_watch")
    alarms = written.get("alarms") if isinstance(written, Mapping) else None
    for i, alarm in enumerate(alarms if isinstance(alarms, list) else []):
        if not isinstance(alarm, Mapping) or _is_default_alarm(alarm):
            continue
        where = cfg.position(("gpu_watch", "alarms", i))
        source = cfg.positions.text_of(where[0]) if where and cfg.positions else None
        what = f"{alarm.get('metric', 'temperature')} alarm ({alarm.get('action', 'warn')})"
        note = ConfigWarning(
            f"{why}: this {what} cannot act on the run",
            line=where[0] if where else None,
            column=where[1] if where else None,
            path=f"gpu_watch.alarms[{i}]",
            hint="train on a GPU, or try it on a simulated one: gpu_watch: {simulate: true}",
            source_line=source,
        )
        warnings.warn(note, stacklevel=4)


def _is_default_alarm(alarm: Mapping[str, Any]) -> bool:
    """Whether ``alarm`` is the alarm a run has when its config writes none."""
    from ludwig_nb.config.gpu_watch import DEFAULT_ALARM, AlarmRuleConfig

    try:
        return AlarmRuleConfig(**alarm) == AlarmRuleConfig(**DEFAULT_ALARM)
    except TypeError:  # keys of a hand-written alarm that a rule does not have
        return False


class _NoRemoteCap:
    """The power capper of a run whose GPUs are on other machines.

    NVML here cannot cap them, so a ``power_limit`` throttle rule holds them by spacing the
    steps instead.
    """

    def apply(self, index: int, watts: float) -> str:
        del index, watts
        return "the GPU is on a Ray worker's node, not this machine"

    def restore(self) -> list[str]:
        return []


def _attach_remote(run: Run, section: Mapping[str, Any], job: TrainJob) -> None:
    """The sampler, profile and alarm watch of a run whose workers read their GPUs."""
    from ludwig_nb.core.alarms import AlarmPolicy
    from ludwig_nb.gpu.remote import RemoteSampler
    from ludwig_nb.runs.alarm_watch import AlarmWatch

    sampler = RemoteSampler(interval=max(0.25, float(section.get("interval", 1.0) or 1.0)))
    job.gpu_feed = sampler.feed
    _samplers[run] = sampler
    _profile_run(run, sampler)
    _watch_deadline(run, section, sampler)
    _watch_slowdown(run, sampler)
    watch = AlarmWatch(  # the workers report only the GPUs they train on: the run's own
        sampler,
        AlarmPolicy.from_config(section),
        targets=lambda: [run],
        power_capper=_NoRemoteCap,
        own_gpu=True,
    ).start()
    run.add_finish_callback(lambda _: watch.close())
