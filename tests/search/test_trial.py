"""A trial's timing from its events: time per step, evaluations and checkpoints aside."""

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.search.trial import WARM_STEPS, TrialRecord, note_timing, trial_end_state

SCHEDULE = ev.ScheduleInfo(total_steps=40, steps_per_epoch=10, epochs=4, batch_size=32)


def _started(record, at=100.0):
    note_timing(
        record,
        ev.RunStarted(
            time=at, run_id="r", name="r", engine="builtin", device="cpu", schedule=SCHEDULE
        ),
    )


def _step(record, step, at):
    note_timing(
        record,
        ev.StepFinished(time=at, step=step, epoch=0, start_time=at - 0.1, batch_size=32, loss=1.0),
    )


def test_the_plan_gives_the_shape_and_steps_before_the_plan_are_not_timed():
    record = TrialRecord(number=0, params={})
    _step(record, 0, 99.0)  # a step before RunStarted (a resumed run's replay)
    assert record.step_s is None and record.shape is None
    _started(record)
    assert record.shape.batch_size == 32 and record.shape.planned_steps == 40
    assert record.trained_at == 100.0


def test_time_per_step_leaves_out_evaluations_checkpoints_and_the_first_steps():
    record = TrialRecord(number=0, params={})
    _started(record)
    for k in range(WARM_STEPS):  # slow one-off steps: 2 s each
        _step(record, k, 100.0 + 2.0 * (k + 1))
    settled_at = 100.0 + 2.0 * WARM_STEPS
    assert record.settled == (WARM_STEPS, settled_at, 0.0)
    # an evaluation of 3 s, then steps of 0.5 s
    note_timing(
        record,
        ev.EvaluationFinished(
            time=settled_at + 3.0, step=WARM_STEPS - 1, epoch=0, start_time=settled_at, metrics={}
        ),
    )
    for j in range(4):
        _step(record, WARM_STEPS + j, settled_at + 3.0 + 0.5 * (j + 1))
    assert record.aside_s == pytest.approx(3.0)
    assert record.step_s == pytest.approx(0.5)
    assert record.steps == WARM_STEPS + 4


def test_a_checkpoint_counts_as_time_aside():
    record = TrialRecord(number=0, params={})
    note_timing(record, ev.CheckpointSaved(time=12.0, step=3, start_time=10.5, path="c"))
    assert record.aside_s == pytest.approx(1.5)


@pytest.mark.parametrize(
    ("status", "state"),
    [
        ("completed", "completed"),
        ("failed", "failed"),
        ("stopped", "stopped"),
        ("paused", "stopped"),
    ],
)
def test_a_finished_trials_state_comes_from_its_runs_status(status, state):
    class Run:
        pass

    run = Run()
    run.status = status
    assert trial_end_state(run) == state
