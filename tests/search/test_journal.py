"""The search journal: lines flushed one by one, read back into trials after any crash."""

import json
import threading

from ludwig_nb.core import events as ev
from ludwig_nb.search.journal import JOURNAL_FILE, Journal, finished_entry
from ludwig_nb.search.trial import TrialRecord


def _journal(tmp_path, times=(10.0, 11.0, 12.0, 13.0, 14.0, 15.0)):
    clock = iter(times)
    return Journal(tmp_path, lambda: next(clock), threading.RLock())


def test_every_line_carries_the_time_first_and_the_finished_trial_reads_back_whole(tmp_path):
    journal = _journal(tmp_path)
    schedule = ev.ScheduleInfo(total_steps=30, steps_per_epoch=10, epochs=3, batch_size=16)
    journal.append({"event": "trial_started", "trial": 0, "params": {"trainer.lr": 0.1}})
    journal.append({"event": "trial_evaluated", "trial": 0, "step": 1, "value": 0.5})
    record = TrialRecord(number=0, params={"trainer.lr": 0.1}, started=10.0, ended=12.0)
    record.metric, record.epoch, record.steps, record.step_s = 0.5, 1, 10, 0.02
    record.schedule, record.gpu, record.run_dir = schedule, (1, 0.5), "/runs/t0"
    journal.append(finished_entry(record, "completed"))
    lines = [json.loads(x) for x in (tmp_path / JOURNAL_FILE).read_text().splitlines()]
    assert [next(iter(line)) for line in lines] == ["time"] * 3
    assert [line["time"] for line in lines] == [10.0, 11.0, 12.0]
    restored = journal.restore()[0]
    assert restored.state == "completed" and restored.metric == 0.5 and restored.epoch == 1
    assert restored.curve == [(1, 0.5)] and restored.started == 10.0 and restored.ended == 12.0
    assert restored.schedule == schedule and restored.gpu == (1, 0.5)
    assert restored.steps == 10 and restored.step_s == 0.02 and restored.run_dir == "/runs/t0"
    assert restored.counts


def test_a_line_cut_short_by_a_crash_is_skipped_and_a_started_trial_reads_back_running(tmp_path):
    journal = _journal(tmp_path)
    journal.append({"event": "trial_started", "trial": 0, "params": {"a": 1}})
    journal.append({"event": "trial_started", "trial": 1, "params": {"a": 2}})
    with (tmp_path / JOURNAL_FILE).open("a") as fh:
        fh.write('{"time": 12.0, "event": "trial_fin')  # the kernel died mid-line
    trials = journal.restore()
    assert sorted(trials) == [0, 1]
    assert [t.state for t in trials.values()] == ["running", "running"]
    assert not trials[1].counts  # it reruns


def test_a_trial_the_whole_search_stopped_in_does_not_count(tmp_path):
    journal = _journal(tmp_path)
    journal.append({"event": "trial_started", "trial": 0, "params": {}})
    record = TrialRecord(number=0, params={}, started=10.0, search_stopped=True)
    journal.append(finished_entry(record, "stopped"))
    restored = journal.restore()[0]
    assert restored.state == "stopped" and restored.search_stopped and not restored.counts


def test_no_journal_yet_means_no_trials(tmp_path):
    assert _journal(tmp_path).restore() == {}
