"""Fixtures for the UI tests: a fake run with the ``runs.Run`` handle interface, fed by
synthetic events, a fake sampler, and a spy that counts widget comm messages.

No torch here: widgets are tested without training (``scripts/ci/test_colab.sh`` also runs these
tests under Colab's pinned ipywidgets 7).
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.core.gpu_sample import GpuSample, HostSample, Snapshot
from ludwig_nb.core.state import RunState
from ludwig_nb.runs.handle import EtaReading, RunHandle
from ludwig_nb.runs.ledger import EventSubscription, RunLedger
from ludwig_nb.ui.colab import _reset_notice

T0 = 1_700_000_000.0  # wall-clock seconds of the synthetic run's start


class FakeRun:
    """The Run handle (runs/handle.py) over a real ``RunLedger`` the test feeds with
    ``emit``: the state and the ETA are the run side's, as in a real run."""

    def __init__(
        self,
        name: str = "demo",
        directory: Path | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.id = f"{name}-20261130-080000-abcd"
        self.directory = directory or Path("/tmp/results") / self.id
        self.engine_name = "builtin"
        self.error: BaseException | None = None
        self.traceback_text = ""
        self.profile_summary: dict[str, Any] = {}
        self._config = config
        self.calls: list[str] = []
        self.ledger = RunLedger(self.id, name, "builtin", config=config)
        self._done = threading.Event()

    def emit(self, *events: ev.Event) -> None:
        for event in events:
            self.ledger.append(event)
            if isinstance(event, ev.RunFailed):
                self.traceback_text = event.traceback
        if self.state.is_final:
            self._done.set()

    def subscribe(self) -> EventSubscription:
        return self.ledger.subscribe()

    def eta_reading(self, now: float) -> EtaReading:
        return self.ledger.eta_reading(now)

    @property
    def config(self) -> dict[str, Any] | None:
        """Read-only: the ledger's early-stop watch took it at construction."""
        return self._config

    @property
    def events(self) -> list[ev.Event]:
        return list(self.ledger.events.view())

    @property
    def device_index(self) -> int | None:
        return self.ledger.device_index

    @property
    def state(self) -> RunState:
        return self.ledger.state

    @property
    def status(self) -> str:
        return self.state.status

    @property
    def step(self) -> int:
        return self.state.step

    @property
    def total_steps(self) -> int:
        return self.state.total_steps

    @property
    def epoch(self) -> int:
        return self.state.epoch

    @property
    def device(self) -> str:
        return self.state.device

    @property
    def is_done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> FakeRun:
        self._done.wait(timeout)
        return self

    def stop(self, reason: str = "user") -> None:
        self.calls.append(f"stop:{reason}")

    def pause(self, reason: str = "user") -> None:
        self.calls.append("pause")

    def resume(self, reason: str | None = None) -> None:
        self.calls.append("resume")


SCHEDULE = ev.ScheduleInfo(
    total_steps=100,
    steps_per_epoch=50,
    epochs=2,
    epoch_starts=(0, 50),
    evaluations_after=(49, 99),
    checkpoints_after=(49, 99),
    batch_size=32,
)


def started(run: FakeRun, t: float = T0, device: str = "cpu") -> ev.RunStarted:
    return ev.RunStarted(
        time=t, run_id=run.id, name=run.name, engine="builtin", device=device, schedule=SCHEDULE
    )


def steps(first: int, count: int, t0: float, step_s: float = 0.1) -> list[ev.StepFinished]:
    """``count`` steps from index ``first``, each ``step_s`` seconds, from wall time ``t0``."""
    return [
        ev.StepFinished(
            time=t0 + (i + 1) * step_s,
            step=first + i,
            epoch=(first + i) // SCHEDULE.steps_per_epoch,
            start_time=t0 + i * step_s,
            batch_size=32,
            loss=2.0 / (1 + 0.05 * (first + i)),
        )
        for i in range(count)
    ]


def evaluation(step: int, t: float, accuracy: float, loss: float) -> ev.EvaluationFinished:
    return ev.EvaluationFinished(
        time=t,
        step=step,
        epoch=step // SCHEDULE.steps_per_epoch,
        start_time=t - 0.5,
        metrics={
            "training": {
                "label": {"accuracy": accuracy + 0.05, "loss": loss * 0.9},
                "combined": {"loss": loss * 0.9},
            },
            "validation": {
                "label": {"accuracy": accuracy, "loss": loss},
                "combined": {"loss": loss},
            },
        },
        improved=True,
    )


@dataclasses.dataclass
class FakeClock:
    """Wall-clock seconds that tests move by hand."""

    now: float = T0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def run() -> FakeRun:
    return FakeRun()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def gpu_sample(index: int = 0, **overrides: Any) -> GpuSample:
    """A plausible reading of a hot, busy 16 GiB GPU (slowdown at 87 °C)."""
    values: dict[str, Any] = {
        "index": index,
        "name": "Fake GPU",
        "utilization_gpu": 87.0,
        "memory_used": 6 * 2**30,
        "memory_total": 16 * 2**30,
        "temperature": 84.0,
        "temperature_slowdown": 87.0,
        "temperature_shutdown": 92.0,
        "power_draw": 180.0,
        "power_limit": 250.0,
        "time": T0,
    }
    values.update(overrides)
    return GpuSample(**values)


def host_sample() -> HostSample:
    return HostSample(time=T0, cpu_percent=42.0, memory_used=8 * 2**30, memory_total=32 * 2**30)


class FakeSampler:
    """``latest()`` like ``ludwig_nb.gpu.Sampler``; the test sets ``snapshot``."""

    def __init__(self, snapshot: Snapshot | None) -> None:
        self.snapshot = snapshot

    def latest(self) -> Snapshot | None:
        return self.snapshot


class SyncSpy:
    """Watches how widgets sync: comm messages (``Widget._send``), ``hold_sync`` batches
    per widget, and trait changes made outside a batch.

    Under ipywidgets 8 messages are recorded even without a kernel; ipywidgets 7 sends
    nothing without one (so ``messages`` stays empty there), but the batches and the
    unbatched changes are recorded under both.
    """

    def __init__(self) -> None:
        self.messages: list[str] = []  # model ids, one per "update" message
        self.batches: list[str] = []  # model ids, one per hold_sync entered
        self.unbatched: list[tuple[str, str]] = []  # (model id, trait) set outside a batch

    def reset(self) -> None:
        self.messages.clear()
        self.batches.clear()
        self.unbatched.clear()

    @staticmethod
    def _count(ids: list[str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for model_id in ids:
            counts[model_id] = counts.get(model_id, 0) + 1
        return counts

    def messages_per_widget(self) -> dict[str, int]:
        return self._count(self.messages)

    def batches_per_widget(self) -> dict[str, int]:
        return self._count(self.batches)


@pytest.fixture
def sync_spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[SyncSpy]:
    import contextlib

    from ipywidgets import Widget

    spy = SyncSpy()
    original_send, original_hold, original_notify = (
        Widget._send,
        Widget.hold_sync,
        Widget.notify_change,
    )

    def send(self: Any, msg: dict[str, Any], buffers: Any = None) -> None:
        if msg.get("method") == "update":
            spy.messages.append(self.model_id)
        original_send(self, msg, buffers)

    @contextlib.contextmanager
    def hold_sync(self: Any) -> Iterator[None]:
        spy.batches.append(self.model_id)
        with original_hold(self):
            yield

    def notify_change(self: Any, change: Any) -> None:
        opened = self.comm is not None  # traits set while constructing are not syncs
        if opened and change["name"] in self.keys and not self._holding_sync:
            spy.unbatched.append((self.model_id, change["name"]))
        original_notify(self, change)

    monkeypatch.setattr(Widget, "_send", send)
    monkeypatch.setattr(Widget, "hold_sync", hold_sync)
    monkeypatch.setattr(Widget, "notify_change", notify_change)
    _give_widgets_a_live_comm(monkeypatch)
    yield spy


class _LiveComm:
    """A comm that looks connected to a kernel. Which comm ipywidgets 8 gets otherwise
    depends on what the test process imported before (once ipykernel is imported, comms
    have ``kernel = None`` outside a kernel and widgets send nothing), so the message
    counts would depend on test order."""

    kernel = True

    def __init__(self, comm_id: str | None = None, **_: Any) -> None:
        import uuid

        self.comm_id = comm_id or uuid.uuid4().hex

    def send(self, *args: Any, **kwargs: Any) -> None:
        pass

    def on_msg(self, callback: Any) -> None:
        pass

    def close(self, *args: Any, **kwargs: Any) -> None:
        pass


def _give_widgets_a_live_comm(monkeypatch: pytest.MonkeyPatch) -> None:
    import ipywidgets.widgets.widget as widget_module

    if hasattr(widget_module, "comm"):  # ipywidgets 8; 7 sends nothing without a kernel
        monkeypatch.setattr(widget_module.comm, "create_comm", _LiveComm)


# -- the fake google.colab (tests/fixtures/colab) -------------------------------------
FAKE_COLAB = Path(__file__).resolve().parents[1] / "fixtures" / "colab"


def forget_colab() -> None:
    """Unimport the fake (and a ``google`` namespace that only it made)."""
    for name in [m for m in sys.modules if m == "google.colab" or m.startswith("google.colab.")]:
        del sys.modules[name]
    google = sys.modules.get("google")
    paths = list(getattr(google, "__path__", []))
    if google is not None and paths and all(str(FAKE_COLAB) in p for p in paths):
        del sys.modules["google"]


@pytest.fixture
def fake_colab(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``google.colab`` importable (not yet imported), as at the start of a Colab kernel."""
    forget_colab()
    monkeypatch.syspath_prepend(str(FAKE_COLAB))
    _reset_notice()
    yield None
    forget_colab()
    _reset_notice()


@pytest.fixture(autouse=True, scope="session")
def _bqplot_loaded() -> None:
    """The dashboard's bqplot charts imported before any test draws a frame.

    A dashboard makes its bqplot charts only once a loader thread has imported bqplot (a frame
    never waits on that import); a test that draws on the first frame would otherwise race it.
    """
    from ludwig_nb.ui import dashboard

    dashboard.bqplot_ready()
    dashboard._charts_loaded.wait(120)


def _fake_run_is_a_handle(run: FakeRun) -> RunHandle:  # mypy: the fake is what views read
    return run
