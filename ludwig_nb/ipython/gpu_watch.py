# IPython's magic decorators and display() carry no type hints.
# mypy: disable-error-code="untyped-decorator,no-untyped-call"
"""``%gpu_watch``: live GPU gauges, a timeline and temperature alarms in the notebook.

The magic only parses its options and wires library pieces together: the kernel's shared
sampler (or a simulated GPU), an ``AlarmWatch`` on the runs of this kernel, and a
``GpuWatchView`` refreshed by the UI pump.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

__all__ = ["GpuWatchMagics", "build_watch", "parse_devices", "parse_duration"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$", re.IGNORECASE)
_UNIT = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """``"90"``/``"90s"``/``"10m"``/``"1h"`` -> seconds. Raises ``UsageError`` (one line)."""
    match = _DURATION.match(text)
    if not match or float(match.group(1)) <= 0:
        raise UsageError(f"--history {text!r}: use a duration like 90s, 10m or 1h")
    return float(match.group(1)) * _UNIT[match.group(2).lower()]


def parse_devices(text: str) -> list[int]:
    """``"0,1"`` -> ``[0, 1]``. Raises ``UsageError`` (one line)."""
    try:
        devices = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"--devices {text!r}: use GPU indices like 0,1") from None
    if not devices or min(devices) < 0:
        raise UsageError(f"--devices {text!r}: use GPU indices like 0,1")
    return devices


@magics_class
class GpuWatchMagics(Magics):
    """The ``%gpu_watch`` line magic; keeps the views it started so ``--stop`` ends them.

    Args:
        shell: The IPython shell.
    """

    def __init__(self, shell: Any = None) -> None:
        super().__init__(shell)
        self._watches: list[tuple[Any, Callable[[], None]]] = []

    @magic_arguments()
    @argument(
        "--interval", type=float, default=None, help="seconds between samples (>= 0.25; default 1)"
    )
    @argument("--devices", default=None, help="GPU indices to show, e.g. 0,1 (default: all)")
    @argument(
        "--alarm",
        default=None,
        help="temperature alarm: °C (85), relative to slowdown (slowdown-5), or a thermal "
        "margin ('margin<5': less than 5 °C of headroom left)",
    )
    @argument(
        "--resume-below",
        default=None,
        help="the alarm clears below this (default: alarm - 5; for a margin: 'margin>10')",
    )
    @argument(
        "--action",
        default="warn",
        choices=("warn", "pause", "stop", "throttle"),
        help="what an alarm does to the runs on that GPU (default: warn); throttle holds "
        "the GPU at the alarm temperature by spacing the training steps",
    )
    @argument("--history", default="10m", help="timeline length, e.g. 90s, 10m, 1h (default 10m)")
    @argument(
        "--simulate",
        action="store_true",
        help="watch a simulated GPU that heats with the runs' load",
    )
    @argument(
        "--deadline",
        default=None,
        help="every later run of this kernel must finish by then: 2h, 90min, 18:30 or "
        "2026-08-12T18:30 ('off' forgets it); runs compare their ETA with it and save a "
        "checkpoint before it",
    )
    @argument("--stop", action="store_true", help="stop every %%gpu_watch view of this kernel")
    @line_magic
    def gpu_watch(self, line: str = "") -> Any:
        """Show live GPU gauges.

        Utilisation, memory, temperature against the slowdown and shutdown thresholds, power against
        its limit, throttle reasons, a timeline of the last minutes and an alarm log. Without a GPU
        it says why and shows host CPU/RAM.

        Examples::

            %gpu_watch
            w = %gpu_watch --devices 0 --history 5m
            %gpu_watch --alarm slowdown-5 --action pause   # pause runs on a hot GPU
            %gpu_watch --alarm "margin<5" --action pause   # ... or on little headroom left
            %gpu_watch --alarm slowdown-5 --action throttle   # hold it there instead
            %gpu_watch --deadline 2h   # runs started from now on must be done in 2 hours
            %gpu_watch --simulate --alarm slowdown-5 --action pause
            %gpu_watch --stop
        """
        args = parse_argstring(self.gpu_watch, line)
        for name in ("alarm", "resume_below", "deadline"):  # IPython keeps a value's quotes
            setattr(args, name, _unquote(getattr(args, name)))
        if args.deadline is not None:
            print(set_deadline(args.deadline))
            if not _wants_view(args):
                return None
        if args.stop:
            count = self.stop_all()
            print(f"stopped {count} GPU watch{'es' if count != 1 else ''}")
            return None
        settings = _settings(args)
        return self._start(settings)

    def stop_all(self) -> int:
        """Close every view this magic started; returns how many."""
        watches, self._watches = self._watches, []
        for view, _ in watches:
            view.close()
        return len(watches)

    def _start(self, settings: dict[str, Any]) -> Any:
        view, cleanup = build_watch(**settings)
        self._watches.append((view, cleanup))
        from IPython.display import display

        display(view.widget)
        view.mark_shown(getattr(self.shell, "execution_count", None))
        return view


def _unquote(value: str | None) -> str | None:
    """``"'margin<5'"`` -> ``"margin<5"`` (the shell-style quotes a user puts around ``<``)."""
    if value is not None and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _wants_view(args: Any) -> bool:
    """Whether options other than ``--deadline`` ask for a view."""
    return any(
        getattr(args, name) not in (None, False, "warn", "10m")
        for name in ("interval", "devices", "alarm", "resume_below", "action", "history")
    ) or bool(args.simulate)


def set_deadline(text: str, now: float | None = None) -> str:
    """Set (or with ``off`` forget) the kernel's deadline; returns what to tell the user.

    Raises ``UsageError`` (one line) for text that is not a time.
    """
    import time

    from ludwig_nb.core.formatting import format_clock
    from ludwig_nb.runs.deadline_sources import clear_kernel_deadline, set_kernel_deadline

    if text.strip().lower() in ("off", "none"):
        clear_kernel_deadline()
        return "no deadline for this kernel's runs"
    now = time.time() if now is None else now
    try:
        at = set_kernel_deadline(text, now)
    except ValueError as exc:
        raise UsageError(f"--deadline {text}: {str(exc).split(': ', 1)[-1]}") from None
    return f"runs of this kernel must be done by {format_clock(at, now)}"


def _settings(args: Any) -> dict[str, Any]:
    """Validated options for ``build_watch``; raises ``UsageError`` with one line."""
    from ludwig_nb.gpu import MIN_INTERVAL

    if args.interval is not None and args.interval < MIN_INTERVAL:
        raise UsageError(f"--interval {args.interval}: the minimum is {MIN_INTERVAL} s")
    rule = None
    if args.alarm is None:
        if args.resume_below is not None or args.action != "warn":
            raise UsageError("--resume-below and --action need --alarm (e.g. --alarm slowdown-5)")
    else:
        rule = _alarm_rule(args)
    return {
        "interval": args.interval,
        "devices": None if args.devices is None else parse_devices(args.devices),
        "rule": rule,
        "history": parse_duration(args.history),
        "simulate": bool(args.simulate),
    }


def _alarm_rule(args: Any) -> Any:
    """The ``--alarm`` rule; a bad option raises ``UsageError`` naming it."""
    from ludwig_nb.core.alarms import AlarmRule, parse_threshold

    try:
        threshold = parse_threshold(args.alarm)
    except ValueError as exc:
        raise UsageError(f"--alarm {args.alarm}: {_reason(exc)}") from None
    clear = None
    if args.resume_below is not None:
        try:
            clear = parse_threshold(args.resume_below, clear=True)
        except ValueError as exc:
            raise UsageError(f"--resume-below {args.resume_below}: {_reason(exc)}") from None
    try:
        return AlarmRule("temperature", threshold, clear_below=clear, action=args.action)
    except ValueError as exc:
        options = f"--alarm {args.alarm} --resume-below {args.resume_below}"
        raise UsageError(f"{options}: {exc}") from None


def _reason(exc: ValueError) -> str:
    """The message without its echo of the value (the option names the value already)."""
    text = str(exc)
    return text.split(": ", 1)[1] if text.startswith("bad ") and ": " in text else text


_LOADED = frozenset({"training", "evaluating"})


def _live_runs() -> list[Any]:
    from ludwig_nb.runs.live import active_runs

    return list(active_runs())


def _live_load() -> float:
    """The simulated GPU's load.

    the highest duty cycle of this kernel's training runs (1.0 unless throttled), 0.0 when none
    trains.
    """
    duties = [r.control.duty for r in _live_runs() if r.status in _LOADED]
    return max(duties, default=0.0)


def _shared_pump() -> Any:
    from ludwig_nb.ui.show import shared_pump

    return shared_pump()


def build_watch(
    *,
    interval: float | None = None,
    devices: list[int] | None = None,
    rule: Any = None,
    history: float = 600.0,
    simulate: bool = False,
    sampler: Any = None,
    pump: Any = None,
    targets: Callable[[], Any] | None = None,
) -> tuple[Any, Callable[[], None]]:
    """Wire a sampler, an optional alarm watch and a view; register the view with the pump.

    Returns ``(view, cleanup)``; ``view.close()`` runs ``cleanup`` (stops the alarm watch
    and a sampler started here). ``sampler``/``pump``/``targets`` are injectable for tests.
    The timelines are SVG in core widgets, so they render in Colab without its custom
    widget manager too.
    """
    from ludwig_nb.core.alarms import AlarmPolicy
    from ludwig_nb.gpu import HostSource, Sampler, SimulatedGpu, ThermalProfile, kernel_sampler
    from ludwig_nb.runs.alarm_watch import AlarmWatch
    from ludwig_nb.ui.gpu_watch_view import GpuWatchView

    owned = sampler is None and simulate
    if sampler is None:
        if simulate:
            source = SimulatedGpu(load=_live_load, profile=ThermalProfile.demo())
            sampler = Sampler(source, HostSource(), interval=interval or 1.0)
        else:
            sampler = kernel_sampler(start=False)
            if interval is not None:
                sampler.interval = interval
    if interval is not None:
        sampler.interval = interval
    watch = None
    if rule is not None:
        policy = AlarmPolicy([rule], devices=devices)
        watch = AlarmWatch(sampler, policy, targets or _live_runs).start()

    def cleanup() -> None:
        if watch is not None:
            watch.close()
        if owned:
            sampler.stop()

    title = "GPU watch (simulated)" if simulate else "GPU watch"
    if rule is not None:
        title += f" · alarm {rule.name} → {rule.action}"
    view = GpuWatchView(
        sampler,
        devices=devices,
        history=history,
        alarms=watch,
        title=title,
        on_close=cleanup,
    )
    sampler.start()
    pump = pump or _shared_pump()
    pump.add(view)
    pump.start()
    return view, cleanup
