"""The search panel: what it shows, its controls, its frames and its static summary.

A scripted search with the ``Search`` handle's read interface (no torch, no Optuna: these
tests also run in the pinned Colab and ipywidgets-7 venvs).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, ClassVar

from ludwig_nb.core.eta import Estimate
from ludwig_nb.core.formatting import format_duration
from ludwig_nb.runs.handle import EtaReading
from ludwig_nb.ui.pump import Pump
from ludwig_nb.ui.search_panel import SearchPanel, search_html, search_mimebundle
from tests.ui.conftest import FakeRun

T0 = 1_700_000_000.0


@dataclasses.dataclass
class Record:
    number: int
    params: dict[str, Any]
    state: str
    metric: float | None = None
    last: float | None = None
    epoch: int = 0
    curve: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    started: float | None = None
    ended: float | None = None
    run: Any = None
    gpu: tuple[int, float] | None = None

    @property
    def duration_s(self) -> float | None:
        return None if self.started is None else (self.ended or T0 + 100) - self.started


class TrialRun(FakeRun):
    """A running trial's run whose ETA says ``remaining`` seconds (None: no basis yet)."""

    def __init__(self, remaining: float | None) -> None:
        super().__init__(name="trial-3")
        self.remaining = remaining

    def eta_reading(self, now: float) -> EtaReading:
        if self.remaining is None:
            return EtaReading()
        estimate = Estimate(self.remaining, self.remaining, self.remaining, "stable", now, 0.1)
        return EtaReading(estimate=estimate)


class FakeSearch:
    name = "cars"
    total = 6
    goal = "minimize"
    metric_path = ("validation", "combined", "loss")
    section: ClassVar[dict[str, Any]] = {
        "parameters": {"trainer.learning_rate": {}, "combiner.output_size": {}}
    }
    error = None

    def __init__(self) -> None:
        self.running_run = TrialRun(remaining=30.0)
        self._records = [
            Record(
                0,
                {"trainer.learning_rate": 0.01, "combiner.output_size": 16},
                "completed",
                0.30,
                0.31,
                3,
                [(1, 0.5), (2, 0.35), (3, 0.30)],
                T0,
                T0 + 40,
            ),
            Record(
                1,
                {"trainer.learning_rate": 0.001, "combiner.output_size": 64},
                "pruned",
                0.90,
                0.90,
                1,
                [(1, 0.9)],
                T0 + 40,
                T0 + 45,
            ),
            Record(
                2,
                {"trainer.learning_rate": 0.05, "combiner.output_size": 64},
                "completed",
                0.20,
                0.22,
                3,
                [(1, 0.4), (2, 0.25), (3, 0.2)],
                T0 + 45,
                T0 + 85,
            ),
            Record(
                3,
                {"trainer.learning_rate": 0.02, "combiner.output_size": 16},
                "running",
                0.33,
                0.33,
                1,
                [(1, 0.33)],
                T0 + 85,
                None,
                self.running_run,
            ),
        ]
        self.is_done = False
        self.is_paused = False
        self.actions: list[str] = []

    def records(self):
        return list(self._records)

    def counts(self):
        out = dict.fromkeys(
            ("queued", "running", "paused", "completed", "pruned", "failed", "stopped"), 0
        )
        for r in self._records:
            out[r.state] += 1
        return out

    @property
    def best(self):
        done = [r for r in self._records if r.state == "completed"]
        best = min(done, key=lambda r: r.metric)
        return {"trial": best.number, "metric": best.metric}

    def remaining_s(self, now=None):
        return 0.0 if self.is_done else 30.0 + 2 * 40.0

    def state_of(self, record):
        return record.state

    def stop(self, reason="user"):
        self.actions.append("stop")

    def pause(self, reason="user"):
        self.actions.append("pause")

    def resume(self):
        self.actions.append("resume")


def test_the_html_shows_progress_best_table_and_three_views():
    search = FakeSearch()
    text = search_html(search, now=T0 + 90)
    assert "4 of 6 trials" not in text and "3 of 6 trials" in text  # finished ones count
    assert "search done ≈" in text
    assert "best combined.loss 0.2 (trial 2)" in text
    rows = re.findall(r"<tr[^>]*><td>(\d+)</td>", text)
    assert rows == ["0", "1", "2", "3"]
    assert ">pruned<" in text and ">running<" in text
    assert "trainer.learning_rate" in text and "combiner.output_size" in text
    assert text.count("<svg") == 3  # curves, best so far, parallel coordinates
    # the best trial's curve and line are red and thick; the pruned one is dashed
    assert re.search(r'stroke="#d62728" stroke-width="2.5"[^>]*><title>trial 2<', text)
    assert re.search(r'stroke-dasharray="3,2"[^>]*><title>trial 1<', text)
    # the running trial's own ETA is in its row
    row = re.search(r"<tr[^>]*><td>3</td>.*?</tr>", text, re.S).group(0)
    assert format_duration(30.0) in row


def test_the_headline_says_paused_and_done():
    search = FakeSearch()
    search.is_paused = True
    assert "paused" in search_html(search, now=T0 + 90)
    search.is_done = True
    assert "search done ·" in search_html(search, now=T0 + 90)


def test_controls_act_on_the_search_and_on_the_chosen_trial():
    search = FakeSearch()
    panel = SearchPanel(search, clock=lambda: T0 + 90)
    panel.refresh(0.0)
    assert list(panel.trial_picker.options) == [3]  # only running trials can be chosen
    panel.buttons["pause_search"].click()
    panel.buttons["resume_search"].click()
    panel.buttons["stop_search"].click()
    assert search.actions == ["pause", "resume", "stop"]
    panel.trial_picker.value = 3
    panel.buttons["pause_trial"].click()
    panel.buttons["stop_trial"].click()
    assert search.running_run.calls == ["pause", "stop:user"]


def test_the_pump_draws_frames_and_the_end_publishes_a_static_summary():
    search = FakeSearch()
    clock = iter(float(t) for t in range(1000))
    pump = Pump(fps=4.0, clock=lambda: next(clock), sleep=lambda s: None)
    panel = SearchPanel(search, clock=lambda: T0 + 90)
    finals: list[dict[str, str]] = []
    panel.on_final(lambda p: finals.append(search_mimebundle(p.search, T0 + 90)))
    pump.add(panel)
    pump.frame()
    assert "3 of 6 trials" in panel.view.value and not panel.closed
    search._records[3].state = "completed"
    search._records[3].metric = 0.1
    search.is_done = True
    pump.frame()
    assert panel.closed and pump.views == []
    (bundle,) = finals
    assert bundle["text/plain"].startswith("ludwig_nb search cars: ")
    assert "best combined.loss 0.1 (trial 3)" in bundle["text/html"]
    assert "<svg" in bundle["text/html"] and "<script" not in bundle["text/html"]


def test_views_before_any_metric_say_so():
    text = search_html(_Empty(), now=T0)
    assert "0 of 6 trials" in text and "search done ≈ after the first trial" in text
    assert "no evaluation yet" in text and "no completed trial yet" in text
    assert "no trial with a metric yet" in text


class _Empty(FakeSearch):
    def __init__(self):
        super().__init__()
        self._records = []

    @property
    def best(self):
        return None

    def remaining_s(self, now=None):
        return None


def test_the_gpu_column_shows_each_trials_gpu_and_share():
    search = FakeSearch()
    search._records[3].gpu = (1, 0.5)
    text = search_html(search, now=T0 + 90)
    assert "<th>GPU</th>" in text
    row = re.search(r"<tr[^>]*><td>3</td>.*?</tr>", text, re.S).group(0)
    assert "<td>1 (0.5)</td>" in row
    other = re.search(r"<tr[^>]*><td>0</td>.*?</tr>", text, re.S).group(0)
    assert "(0.5)" not in other


def test_the_headline_counts_the_states_the_table_shows_while_trials_start():
    """A trial that starts while a frame is drawn is counted as the table shows it."""

    class StartingSearch(FakeSearch):
        def __init__(self) -> None:
            super().__init__()
            self._records.append(Record(4, {"trainer.learning_rate": 0.03}, "queued"))
            self.reads = 0

        def state_of(self, record):
            self.reads += 1
            if self.reads > len(self._records):  # a later reading: trial 4 has started
                self._records[4].state = "running"
            return record.state

        def counts(self):
            out = super().counts()
            self.reads += len(self._records)  # counting reads every trial's state again
            if self.reads > len(self._records):
                self._records[4].state = "running"
                out = super().counts()
            return out

    text = search_html(StartingSearch(), now=T0 + 90)
    head = text.split("<table", 1)[0]
    table = text.split("<table", 1)[1]
    running_rows = table.count(">running<")
    queued_rows = table.count(">queued<")
    assert f"{running_rows} running" in head
    assert (f"{queued_rows} queued" in head) == (queued_rows > 0)
