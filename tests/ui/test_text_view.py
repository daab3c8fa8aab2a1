"""The no-widget fallback: pure renderers and a view that updates a display handle."""

from __future__ import annotations

from ludwig_nb.core import events as ev
from ludwig_nb.core.state import reduce_all
from ludwig_nb.ui.text_view import TextView, render_html, render_text
from tests.ui.conftest import T0, FakeClock, FakeRun, started, steps


def test_render_text_and_html() -> None:
    run = FakeRun()
    state = reduce_all([started(run), *steps(0, 30, T0)])
    text = render_text(state, "≈ 5 s", 320.0)
    assert text.startswith("demo [training] step 30 / 100 · epoch 1 / 2 · ETA ≈ 5 s")
    assert "320 samples/s" in text and "loss 0.8" in text
    html = render_html(state, "≈ 5 s", 320.0)
    assert '<progress value="0.3000"' in html and "ETA ≈ 5 s" in html
    alarm = ev.AlarmRaised(
        time=T0, rule="temperature", device=1, value=90.0, threshold=85.0, action="pause"
    )
    text = render_text(reduce_all([alarm], state), "", None)
    assert "⚠ GPU 1 at 90 °C, alarm at 85 °C; resumes below 80 °C · training paused" in text


def test_failed_run_ends_with_a_red_summary(run: FakeRun, clock: FakeClock) -> None:
    updates: list[dict[str, str]] = []
    finals: list[dict[str, str]] = []
    view = TextView(run, update=updates.append, final=finals.append, clock=clock)
    run.emit(started(run), *steps(0, 3, T0))
    view.refresh(0.0)
    assert len(updates) == 1 and not view.closed
    run.emit(ev.RunFailed(time=T0 + 1, step=3, error_type="KeyError", message="'label'"))
    view.refresh(0.1)
    assert view.closed and len(updates) == 1
    [final] = finals
    assert "KeyError: 'label'" in final["text/plain"]
    assert 'data-status="failed"' in final["text/html"] and "#c62828" in final["text/html"]
    view.refresh(5.0)
    assert len(finals) == 1


class _WithDeadline(FakeRun):
    """A run whose ETA reading carries a deadline outlook (``EtaReading.deadline``)."""

    def __init__(self) -> None:
        super().__init__()
        self.deadline: dict[str, object] | None = None

    def eta_reading(self, now: float):  # type: ignore[no-untyped-def]
        import dataclasses

        return dataclasses.replace(super().eta_reading(now), deadline=self.deadline)


def test_the_view_says_how_the_deadline_looks_and_when_a_gpu_slows_down(clock: FakeClock) -> None:
    run = _WithDeadline()
    updates: list[dict[str, str]] = []
    finals: list[dict[str, str]] = []
    view = TextView(run, update=updates.append, final=finals.append, clock=clock)
    run.emit(started(run), *steps(0, 30, T0))
    clock.now = T0 + 3.0
    view.refresh(0.0)
    assert "⏰" not in updates[-1]["text/plain"] and "lnb-deadline" not in updates[-1]["text/html"]
    run.deadline = {"verdict": "late", "text": "likely finishes 20 min after your deadline"}
    run.emit(ev.GpuSlowdown(time=T0 + 3, device=0, active=True, share=0.4, text="GPU 0 slowed"))
    view.refresh(1.0)
    text, page = updates[-1]["text/plain"], updates[-1]["text/html"]
    assert "⏰ likely finishes 20 min after your deadline" in text and "⚠ GPU 0 slowed" in text
    assert 'data-verdict="late"' in page and "#c62828" in page and "GPU 0 slowed" in page
    run.deadline = {"verdict": "passed", "text": "your deadline passed"}  # nothing left to say
    run.emit(ev.GpuSlowdown(time=T0 + 4, device=0, active=False, share=0.0))
    view.refresh(2.0)
    assert "⏰" not in updates[-1]["text/plain"] and "⚠" not in updates[-1]["text/plain"]
    assert "lnb-deadline" not in updates[-1]["text/html"]
    run.deadline = {"verdict": "late", "text": "likely finishes 20 min after your deadline"}
    run.emit(ev.RunFinished(time=T0 + 5, status="completed", step=30))
    view.refresh(3.0)
    assert "deadline" not in finals[-1]["text/plain"] + finals[-1]["text/html"]
