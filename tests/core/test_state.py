from ludwig_nb.core import events as ev
from ludwig_nb.core.state import RunState, reduce_all, reduce_state

SCHEDULE = ev.ScheduleInfo(total_steps=4, steps_per_epoch=2, epochs=2, batch_size=8)


def _started(t=0.0):
    return ev.RunStarted(
        time=t, run_id="a-1", name="a", engine="builtin", device="cpu", schedule=SCHEDULE
    )


def test_steps_advance_progress_and_samples():
    state = reduce_all(
        [
            _started(),
            ev.StepFinished(time=1, step=0, epoch=0, start_time=0.5, batch_size=8, loss=0.9),
            ev.StepFinished(time=2, step=1, epoch=0, start_time=1.5, batch_size=8, loss=0.8),
        ]
    )
    assert (state.status, state.step, state.total_steps) == ("training", 2, 4)
    assert state.progress == 0.5 and state.samples_seen == 16 and state.last_loss == 0.8


def test_pause_and_resume_account_paused_time():
    state = reduce_all([_started(), ev.Paused(time=10, step=1, reason="user")])
    assert state.status == "paused" and state.pause_reason == "user"
    state = reduce_state(state, ev.Resumed(time=13.5, step=1, paused_at=10))
    assert state.status == "training" and state.paused_seconds == 3.5


def test_best_metrics_follow_improvement_only():
    first = {"validation": {"y": {"accuracy": 0.8}}}
    worse = {"validation": {"y": {"accuracy": 0.7}}}
    state = reduce_all(
        [
            _started(),
            ev.EvaluationFinished(
                time=1, step=1, epoch=0, start_time=0.9, metrics=first, improved=True
            ),
            ev.EvaluationFinished(
                time=2, step=3, epoch=1, start_time=1.9, metrics=worse, improved=False
            ),
        ]
    )
    assert state.best_metrics == first and state.latest_metrics == worse and state.evaluations == 2


def test_alarms_raise_replace_and_clear():
    raised = ev.AlarmRaised(time=1, rule="temp", device=0, value=86, threshold=85, action="pause")
    again = ev.AlarmRaised(time=2, rule="temp", device=0, value=88, threshold=85, action="pause")
    state = reduce_all([_started(), raised, again])
    assert len(state.alarms) == 1 and state.alarms[0]["value"] == 88
    state = reduce_state(state, ev.AlarmCleared(time=3, rule="temp", device=0, value=70))
    assert state.alarms == ()


def test_final_status_is_sticky_and_complete_means_full_progress():
    state = reduce_all([_started(), ev.RunFinished(time=5, status="completed", step=4)])
    assert state.is_final and state.progress == 1.0
    assert reduce_state(state, ev.PhaseChanged(time=6, phase="training")).status == "completed"


def test_failure_keeps_the_message():
    state = reduce_all(
        [_started(), ev.RunFailed(time=3, step=1, error_type="KeyError", message="'x'")]
    )
    assert state.status == "failed" and state.error == "KeyError: 'x'" and state.finished_at == 3


def test_to_dict_is_json_ready():
    import json

    json.dumps(RunState(name="x").to_dict())


def test_duration_counts_from_the_first_event_preprocessing_included():
    state = reduce_all(
        [
            ev.PhaseChanged(time=1.0, phase="queued"),
            ev.PhaseChanged(time=2.0, phase="preprocessing"),
            _started(t=5.0),
        ]
    )
    assert state.started_at == 1.0


def test_the_workers_of_a_distributed_run_are_the_latest_report():
    first = ev.WorkersReported(time=1.0, workers=({"rank": 0, "steps": 3},))
    later = ev.WorkersReported(time=2.0, workers=({"rank": 0, "steps": 9}, {"rank": 1, "steps": 8}))
    state = reduce_state(reduce_state(RunState(), first), later)
    assert [w["steps"] for w in state.workers] == [9, 8]
    assert state.to_dict()["workers"] == [{"rank": 0, "steps": 9}, {"rank": 1, "steps": 8}]


def test_reduce_state_makes_a_new_state_with_exactly_the_changed_fields():
    """The reducer lays the changes over a copy (no dataclasses.replace): the old state stays
    as it was and the new one equals what replace would build."""
    import dataclasses

    before = reduce_state(
        RunState(run_id="r", status="training", samples_seen=8),
        ev.PhaseChanged(time=5.0, phase="training"),
    )
    step = ev.StepFinished(time=6.0, step=3, epoch=1, start_time=5.9, batch_size=4, loss=0.5)
    after = reduce_state(before, step)
    assert after is not before and type(after) is RunState
    assert (before.step, before.samples_seen, before.updated_at) == (0, 8, 5.0)
    expected = dataclasses.replace(
        before, step=4, epoch=1, last_loss=0.5, batch_size=4, samples_seen=12, updated_at=6.0
    )
    assert after == expected and after.started_at == 5.0
