"""%gpu_watch: options, one-line usage errors, the returned view, --stop."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from IPython.core.error import UsageError

from ludwig_nb.gpu import stop_kernel_sampler
from ludwig_nb.ipython import gpu_watch as magic_module
from ludwig_nb.ipython.gpu_watch import GpuWatchMagics, parse_devices, parse_duration
from ludwig_nb.ui.gpu_watch_view import GpuWatchView
from ludwig_nb.ui.pump import Pump


class IdlePump(Pump):
    """A real pump the test drives frame by frame (no thread)."""

    started = 0

    def start(self) -> None:
        self.started += 1


@pytest.fixture
def pump(monkeypatch: pytest.MonkeyPatch) -> IdlePump:
    instance = IdlePump()
    monkeypatch.setattr(magic_module, "_shared_pump", lambda: instance)
    return instance


@pytest.fixture
def shell(ip: Any) -> Any:
    if "GpuWatchMagics" not in ip.magics_manager.registry:
        ip.register_magics(GpuWatchMagics)
    yield ip
    ip.run_line_magic("gpu_watch", "--stop")
    stop_kernel_sampler()


def first_tick(view: GpuWatchView) -> None:
    ticked = threading.Event()
    unsubscribe = view.sampler.subscribe(lambda snap: ticked.set())  # type: ignore[attr-defined]
    if view.sampler.latest() is None:
        assert ticked.wait(5.0)
    unsubscribe()


BAD_OPTIONS = [
    ("--interval 0.1", "minimum is 0.25 s"),
    ("--devices a,b", "GPU indices like 0,1"),
    ("--history 10x", "duration like 90s"),
    ("--alarm hot", "--alarm hot: use a number like 85, 'slowdown-5' or 'margin<5'"),
    ("--alarm margin>5", "--alarm margin>5: an alarm fires on little margin"),
    ("--alarm margin<5 --resume-below margin<9", "--resume-below margin<9: an alarm clears"),
    ("--alarm margin<5 --resume-below 80", "both be margins"),
    ("--alarm 'margin<5' --resume-below 'margin>3'", "cool side"),
    ("--deadline soon", "--deadline soon: use a duration like 2h"),
    ("--resume-below 70", "need --alarm"),
    ("--action explode", "invalid choice"),
]


def test_bad_options_are_one_line_usage_errors(shell: Any, pump: IdlePump) -> None:
    for line, message in BAD_OPTIONS:  # one shell for all cases: its setup is the slow part
        with pytest.raises(UsageError, match=message) as info:
            shell.run_line_magic("gpu_watch", line)
        assert "\n" not in str(info.value).strip(), line
    assert pump.views == []


def test_parsers() -> None:
    assert [parse_duration(t) for t in ("90", "90s", "10m", "1.5h")] == [90.0, 90.0, 600.0, 5400.0]
    assert parse_devices("0, 2") == [0, 2]
    with pytest.raises(UsageError):
        parse_devices("-1")


def test_simulated_watch_with_a_pausing_alarm_returns_a_live_view(
    shell: Any, pump: IdlePump, capsys: Any
) -> None:
    view = shell.run_line_magic(
        "gpu_watch",
        "--simulate --alarm slowdown-5 --resume-below slowdown-12 --action pause --history 2m",
    )
    assert isinstance(view, GpuWatchView) and pump.views == [view] and pump.started == 1
    assert view.history == 120.0 and view.sampler.running  # type: ignore[attr-defined]
    rule = view.alarms.policy.rules[0]  # type: ignore[union-attr]
    assert (rule.name, rule.action, str(rule.clear_below)) == (
        "temperature>=slowdown-5",
        "pause",
        "slowdown-12",
    )
    first_tick(view)
    pump.frame()
    assert (
        "Simulated GPU" in view.header.value
        and "alarm temperature&gt;=slowdown-5 → pause" in view.header.value
    )
    assert view._shown_in == shell.execution_count  # the displayhook will not show it twice
    shell.run_line_magic("gpu_watch", "--stop")
    assert "stopped 1 GPU watch" in capsys.readouterr().out
    assert view.closed and not view.sampler.running  # type: ignore[attr-defined]
    pump.frame()
    assert pump.views == []


def test_without_a_driver_the_view_says_why(shell: Any, pump: IdlePump) -> None:
    view = shell.run_line_magic("gpu_watch", "--devices 0 --interval 0.5")
    if view.sampler.gpu_available:  # type: ignore[attr-defined]
        pytest.skip("this machine has a GPU")
    assert view.sampler.interval == 0.5  # type: ignore[attr-defined]
    first_tick(view)
    pump.frame()
    assert "no NVIDIA driver found" in view.host.value and "CPU" in view.host.value


def test_a_margin_alarm_and_the_kernel_s_deadline(shell: Any, pump: IdlePump, capsys: Any) -> None:
    from ludwig_nb.runs.deadline_sources import kernel_deadline

    view = shell.run_line_magic(
        "gpu_watch", "--simulate --alarm 'margin<5' --resume-below 'margin>12' --action pause"
    )
    rule = view.alarms.policy.rules[0]  # type: ignore[union-attr]
    assert (rule.name, str(rule.clear_below), rule.action) == ("margin<5", "margin>12", "pause")
    assert shell.run_line_magic("gpu_watch", "--deadline 2h") is None  # no second view
    assert "runs of this kernel must be done by" in capsys.readouterr().out
    found = kernel_deadline()
    assert found is not None and found[1] == "2h"
    shell.run_line_magic("gpu_watch", "--deadline off")
    assert kernel_deadline() is None and "no deadline" in capsys.readouterr().out
    assert pump.views == [view]


def test_the_docstring_is_the_help() -> None:
    doc = GpuWatchMagics.gpu_watch.__doc__ or ""
    assert "Show live GPU gauges" in doc and "--alarm" in doc and "--simulate" in doc
