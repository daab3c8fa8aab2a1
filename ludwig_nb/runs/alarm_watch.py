"""``AlarmWatch``: turns the alarm policy's transitions into actions on the running runs.

It subscribes to a :class:`~ludwig_nb.gpu.Sampler`; on every snapshot it feeds the GPUs to
the :class:`~ludwig_nb.core.alarms.AlarmPolicy` and, for each raised or cleared alarm, acts
on the runs using that GPU (a run with ``device_index`` None is affected by every GPU; a run on
the CPU by none, unless the watch is its own simulated GPU's):

* ``warn``: an ``AlarmRaised`` / ``AlarmCleared`` event only;
* ``pause``: ``control.pause("alarm:<rule>")`` until the alarm clears on every GPU that
  raised it for that run, then ``control.resume("alarm:<rule>")``;
* ``stop``: ``control.stop("alarm: <message>")`` (a graceful stop; checkpoints are kept);
* ``throttle``: the raise/clear events as for ``warn``, and on every snapshot
  :class:`~ludwig_nb.runs.throttle_watch.ThrottleWatch` sets the runs' duty cycle
  (``control.set_pace``) to hold the metric at the threshold.

A run that starts while a pausing or stopping alarm is up is paused or stopped at the next
snapshot. Only runs that train on a GPU are acted on: one on the CPU never, one whose device is
not known yet (preprocessing) once its ``RunStarted`` names a GPU; a simulated GPU stands for
whatever device its runs train on. Everything
runs on the sampler thread; ``RunControl`` and ``emit`` are thread-safe.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Protocol

from ludwig_nb.core.alarms import AlarmPolicy, AlarmRule, AlarmTransition
from ludwig_nb.core.control import RunControl
from ludwig_nb.core.events import ALARM_PAUSE_PREFIX, AlarmCleared, AlarmRaised, Event
from ludwig_nb.core.gpu_sample import Snapshot
from ludwig_nb.runs.throttle_watch import PowerCapper, ThrottleWatch

__all__ = ["AlarmTarget", "AlarmWatch", "pause_reason"]

log = logging.getLogger(__name__)


class AlarmTarget(Protocol):
    """What the watch needs from a run (the ``Run`` handle implements it)."""

    @property
    def control(self) -> RunControl:
        """The run's control, paused or stopped by an alarm's action."""

    @property
    def device_index(self) -> int | None:
        """The GPU the run trains on; None: unknown or several (every alarm applies)."""

    @property
    def uses_gpu(self) -> bool | None:
        """False for a run on the CPU (no GPU's alarm acts on it); None while not known."""

    @property
    def is_active(self) -> bool:
        """True while the run can still train (not finished, failed or stopped)."""

    def emit(self, event: Event) -> None:
        """Record an alarm event in the run's stream."""


class _Sampler(Protocol):
    def subscribe(self, callback: Callable[[Snapshot], object]) -> Callable[[], None]: ...


def pause_reason(rule_name: str) -> str:
    """The ``RunControl`` pause reason an alarm uses: ``alarm:<rule>``."""
    return f"{ALARM_PAUSE_PREFIX}{rule_name}"


class AlarmWatch:
    """Applies ``policy`` to ``sampler``'s snapshots and acts on ``targets()``.

    ``clock``: wall-clock seconds for the events (default ``time.time``). ``log`` keeps the
    last transitions (newest last, at most ``log_size``) for views. ``own_gpu``: the sampler is
    the targets' own simulated GPU, which acts on them whatever device they train on; else a
    run on the CPU (``uses_gpu`` False) is never acted on.

    Args:
        sampler: Its snapshots are checked.
        policy: The rules and the devices they watch.
        targets: Returns the runs an alarm acts on.
        clock: Wall-clock seconds for the events.
        log_size: Transitions kept.
        power_capper: Makes the power capper of ``throttle`` rules on first use.
    """

    def __init__(
        self,
        sampler: _Sampler,
        policy: AlarmPolicy,
        targets: Callable[[], Iterable[AlarmTarget]],
        clock: Callable[[], float] = time.time,
        log_size: int = 50,
        power_capper: Callable[[], PowerCapper] | None = None,
        own_gpu: bool = False,
    ) -> None:
        self.sampler = sampler
        #: the sampler is the targets' own (simulated) GPU: it acts on them on any device
        self.own_gpu = own_gpu
        self.policy = policy
        self._targets = targets
        self._clock = clock
        self._lock = threading.Lock()
        self._unsubscribe: Callable[[], None] | None = None
        # (rule name, device) -> the targets this alarm paused, and those it stopped
        self._paused: dict[tuple[str, int], list[AlarmTarget]] = {}
        self._stopped: dict[tuple[str, int], list[AlarmTarget]] = {}
        self._log: list[AlarmTransition] = []
        self._log_size = log_size
        self.throttle = ThrottleWatch(policy.rules, policy.devices, power_capper)

    def start(self) -> AlarmWatch:
        """Subscribe to the sampler (idempotent); returns self."""
        with self._lock:
            if self._unsubscribe is None:
                self._unsubscribe = self.sampler.subscribe(self.on_snapshot)
        return self

    def stop(self, release: bool = True) -> None:
        """Unsubscribe; with ``release`` resume every run an alarm of this watch paused."""
        with self._lock:
            unsubscribe, self._unsubscribe = self._unsubscribe, None
            paused, self._paused = self._paused, {}
        if unsubscribe is not None:
            unsubscribe()
        if self.throttle:
            with self._lock:  # after any snapshot still being handled
                self.throttle.close(self._targets() if release else ())
        if release:
            for (rule, _), targets in paused.items():
                for target in targets:
                    target.control.resume(pause_reason(rule))

    def close(self) -> None:
        """``stop(release=True)``: unsubscribe and resume what this watch paused."""
        self.stop(release=True)

    @property
    def log(self) -> list[AlarmTransition]:
        """Every alarm transition so far, oldest first."""
        with self._lock:
            return list(self._log)

    def on_snapshot(self, snapshot: Snapshot) -> list[AlarmTransition]:
        """Feed one snapshot; apply and return the transitions (the sampler calls this)."""
        with self._lock:
            transitions = self.policy.update(snapshot.gpus, snapshot.time)
            targets = [t for t in self._targets() if t.is_active and self._watched(t)]
            for change in transitions:
                self._apply(change, targets)
                self._log.append(change)
            del self._log[: max(0, len(self._log) - self._log_size)]
            self._catch_up(targets, snapshot)
            if self.throttle:
                self.throttle.on_snapshot(snapshot, targets)
        return transitions

    def _watched(self, target: AlarmTarget) -> bool:
        """Whether this watch's GPUs act on ``target``: a run known to train on a GPU.

        A GPU's heat says nothing of a run that does not train on it, and until its
        ``RunStarted`` (preprocessing) a run's device is not known: an alarm already up then
        catches it when it starts on a GPU (see :meth:`_catch_up`). A simulated GPU stands for
        the device its runs train on, whichever that is (``own_gpu``).
        """
        return self.own_gpu or target.uses_gpu is True

    # -- actions ---------------------------------------------------------------------
    def _apply(self, change: AlarmTransition, targets: list[AlarmTarget]) -> None:
        affected = [t for t in targets if _uses(t, change.device)]
        key = (change.rule.name, change.device)
        if change.raised:
            for target in affected:
                self._raise(change, target)
            return
        paused = self._paused.pop(key, [])
        self._stopped.pop(key, None)
        for target in {id(t): t for t in [*affected, *paused]}.values():
            self._emit(target, self._cleared_event(change))
        for target in paused:
            if not any(target in ts for (rule, _), ts in self._paused.items() if rule == key[0]):
                target.control.resume(pause_reason(change.rule.name))

    def _raise(self, change: AlarmTransition, target: AlarmTarget) -> None:
        action = change.rule.action
        if action == "pause":
            target.control.pause(pause_reason(change.rule.name))
            self._paused.setdefault((change.rule.name, change.device), []).append(target)
        elif action == "stop":
            target.control.stop(f"alarm: {change.message}")
            self._stopped.setdefault((change.rule.name, change.device), []).append(target)
        self._emit(target, self._raised_event(change))

    def _catch_up(self, targets: list[AlarmTarget], snapshot: Snapshot) -> None:
        """Pause or stop runs that started while a pausing or stopping alarm was already up."""
        for rule, device in self.policy.active():
            if rule.action == "stop":
                self._late_stop(rule, device, targets, snapshot)
            if rule.action != "pause":
                continue
            paused = self._paused.setdefault((rule.name, device), [])
            for target in targets:
                if _uses(target, device) and target not in paused:
                    target.control.pause(pause_reason(rule.name))
                    paused.append(target)
                    self._emit(target, self._late_event(rule, device, snapshot))

    def _late_stop(
        self, rule: AlarmRule, device: int, targets: list[AlarmTarget], snapshot: Snapshot
    ) -> None:
        """Stop the runs a stopping alarm has not acted on yet (they started after it rose)."""
        acted = self._stopped.setdefault((rule.name, device), [])
        for target in targets:
            if _uses(target, device) and not any(target is t for t in acted):
                acted.append(target)
                if not target.control.stop_requested:
                    event = self._late_event(rule, device, snapshot)
                    target.control.stop(f"alarm: {event.message}")
                    self._emit(target, event)

    # -- events ----------------------------------------------------------------------
    def _raised_event(self, change: AlarmTransition) -> AlarmRaised:
        return AlarmRaised(
            time=self._clock(),
            rule=change.rule.name,
            device=change.device,
            value=change.value,
            threshold=change.threshold,
            action=change.rule.action,
            message=change.message,
            margin=change.margin,
            clear="" if change.rule.clear_below is None else str(change.rule.clear_below),
        )

    def _late_event(self, rule: AlarmRule, device: int, snapshot: Snapshot) -> AlarmRaised:
        sample = snapshot.gpu(device)
        value = rule.value(sample) if sample is not None else None
        levels = rule.levels(sample) if sample is not None else None
        return AlarmRaised(
            time=self._clock(),
            rule=rule.name,
            device=device,
            value=0.0 if value is None else value,
            threshold=0.0 if levels is None else levels[0],
            action=rule.action,
            message=f"GPU {device}: {rule.name} alarm already up when the run started",
            # as a fresh alarm carries them, so the run words its pause the same way
            margin=sample.temperature_margin
            if sample is not None and rule.metric == "temperature"
            else None,
            clear="" if rule.clear_below is None else str(rule.clear_below),
        )

    def _cleared_event(self, change: AlarmTransition) -> AlarmCleared:
        return AlarmCleared(
            time=self._clock(), rule=change.rule.name, device=change.device, value=change.value
        )

    @staticmethod
    def _emit(target: AlarmTarget, event: Event) -> None:
        try:
            target.emit(event)
        except Exception:  # one broken run must not stop the alarms for the others
            log.exception("ludwig_nb: could not deliver %s to a run", event.type)


def _uses(target: AlarmTarget, device: int) -> bool:
    return target.device_index is None or target.device_index == device
