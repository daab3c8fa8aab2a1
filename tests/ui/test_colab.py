"""The Colab profile (ui/colab.py) against the fake ``google.colab`` in tests/fixtures/colab."""

from __future__ import annotations

import signal
import sys
from typing import Any

import pytest

from ludwig_nb.ui import colab
from tests.ui.conftest import forget_colab


def test_detected_when_importable_not_only_when_imported(fake_colab: Any) -> None:
    assert "google.colab" not in sys.modules
    assert colab.in_colab()
    assert colab.in_colab(modules={"google.colab": object()})
    assert not colab.in_colab(modules={})


def test_not_detected_without_colab() -> None:
    forget_colab()
    assert not colab.in_colab()
    assert not colab.custom_widget_manager_active()
    assert colab.enable_custom_widget_manager() is False
    assert colab.resolve_charts("auto") == "bqplot"


def test_charts_svg_in_colab_until_the_widget_manager_is_active(fake_colab: Any) -> None:
    assert colab.resolve_charts("auto") == "svg"
    assert colab.resolve_charts("svg") == "svg"
    assert not colab.custom_widget_manager_active()
    from google.colab.output import _widgets  # the fake's private state

    assert colab.resolve_charts("bqplot") == "bqplot"  # the opt-in enables the manager
    assert _widgets.enable_calls == 1 and colab.custom_widget_manager_active()
    assert colab.resolve_charts("auto") == "bqplot"  # the manager is on: bqplot renders
    _widgets.disable_custom_widget_manager()
    assert colab.resolve_charts("auto") == "svg"


def test_charts_outside_colab_and_a_bad_value() -> None:
    assert colab.resolve_charts("auto", colab=False) == "bqplot"
    assert colab.resolve_charts("svg", colab=False) == "svg"
    # bqplot is an extra: without it the dashboard draws SVG, and asking for it says how
    assert colab.resolve_charts("auto", colab=False, bqplot=False) == "svg"
    with pytest.raises(ValueError, match=r"pip install 'ludwig_nb\[lab\]'"):
        colab.resolve_charts("bqplot", colab=False, bqplot=False)
    with pytest.raises(ValueError, match="charts must be one of auto, svg, bqplot, not 'png'"):
        colab.resolve_charts("png")


def test_the_notice_is_taken_once_and_says_how_to_get_the_notebook_back(fake_colab: Any) -> None:
    assert colab.take_notice() and not colab.take_notice()
    text = colab.blocking_notice_html("churn<1>")
    assert "churn&lt;1&gt;.wait()" in text and "ludwig_nb.show(churn&lt;1&gt;)" in text
    assert "--background" in text and "Interrupt" in text and "own thread" in text


def test_first_interrupt_stops_gracefully_second_raises() -> None:
    calls: list[str] = []
    before = signal.getsignal(signal.SIGINT)
    stop = colab.StopOnInterrupt(lambda: calls.append("stop"))
    with colab.graceful_interrupt(stop):
        signal.raise_signal(signal.SIGINT)  # the kernel's interrupt, on the main thread
        assert calls == ["stop"]
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is before
    assert calls == ["stop"] and stop.count == 2


def test_a_second_interrupt_gets_the_cell_back_from_a_run_that_does_not_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ludwig_nb.ui import show
    from ludwig_nb.ui.pump import Pump
    from tests.ui.conftest import FakeRun, started, steps

    monkeypatch.setattr(show, "_display", lambda obj, metadata=None: None)
    interrupts = iter([1, 2])

    def interrupting_sleep(seconds: float) -> None:  # the run ignores stop: never ends
        if next(interrupts, None) is not None:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(
        show, "_blocking_pump", lambda fps: Pump(fps, clock=lambda: 0.0, sleep=interrupting_sleep)
    )
    run = FakeRun()
    run.emit(started(run), *steps(0, 10, 0.0))
    with pytest.raises(KeyboardInterrupt):
        show.show_view(run, mode="widgets", sampler=None, block=True)
    assert run.calls == ["stop:interrupt"]  # stopped once, then the cell was given back


def test_off_the_main_thread_interrupts_are_left_alone() -> None:
    import threading

    seen: list[Any] = []

    def worker() -> None:
        with colab.graceful_interrupt(lambda: None):
            seen.append(signal.getsignal(signal.SIGINT))

    before = signal.getsignal(signal.SIGINT)
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [before]
