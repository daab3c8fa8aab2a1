"""A run's snapshot from its status.json: what a saved or reopened notebook shows in words."""

from __future__ import annotations

from ludwig_nb.core.status_html import (
    FALLBACK_CLASS,
    INTERRUPTED_TEXT,
    snapshot_bundle,
    state_from_status,
)

METRICS = {"test": {"churn": {"accuracy": 0.94}}}
BASELINE = {"test": {"churn": {"accuracy": 0.86}}}


def _status(**fields):
    status = {
        "run_id": "churn-1",
        "name": "churn <a>",
        "status": "completed",
        "step": 2600,
        "total_steps": 3000,
        "best_metrics": METRICS,
        "baseline": BASELINE,
        "baseline_predictors": {"churn": "always 'no'"},
        "eta": {"remaining_s": 3.0},  # status.json's own keys are not the state's
        "pid": 12,
    }
    return {**status, **fields}


def test_the_state_comes_back_from_status_json_whatever_else_it_holds():
    state = state_from_status(_status(alarms=[{"rule": "hot"}]))
    assert state.status == "completed" and state.step == 2600 and state.total_steps == 3000
    assert state.alarms == ({"rule": "hot"},)  # a JSON list back to the state's tuple


def test_an_ended_run_says_why_beside_the_baseline_and_where_it_is():
    state = state_from_status(
        _status(reason="early stopping", evaluations_since_best=5, best_step=2600)
    )
    bundle = snapshot_bundle(state, directory="/runs/churn-1")
    text = bundle["text/plain"].splitlines()
    assert text[0] == "churn <a>: completed, step 2,600 / 3,000"
    assert (
        text[1] == "stopped early: no validation improvement in 5 evaluations; best at step 2,600"
    )
    assert text[2] == "test churn accuracy 0.94 · always 'no': 0.86"
    assert "run directory: /runs/churn-1" in text
    assert not any("live" in line for line in text)
    markup = bundle["text/html"]
    assert f'class="{FALLBACK_CLASS}"' in markup and 'data-status="completed"' in markup
    assert "<b>churn &lt;a&gt;: completed" in markup and "<a>" not in markup  # escaped
    assert "<pre" in markup and "accuracy" in markup  # the metrics table


def test_a_live_snapshot_says_it_was_live_and_carries_the_early_stop_forecast():
    state = state_from_status(_status(status="training", best_metrics={}, latest_metrics={}))
    forecast = "at most 3,000 steps (early stopping); likely stops near step 2,600"
    text = snapshot_bundle(state, early_stop=forecast)["text/plain"]
    assert forecast in text
    assert "snapshot taken while the run was live" in text
    assert "ludwig_nb.show(run) in a cell (the variable holding the run) shows" in text
    named = snapshot_bundle(state_from_status(_status(status="training", name="churn")))
    assert "ludwig_nb.show(churn) in a cell" in named["text/plain"]
    assert "run directory:" not in text  # none given


def test_a_paused_run_says_why_and_an_interrupted_one_what_happened():
    paused = snapshot_bundle(state_from_status(_status(status="paused", pause_reason="sidebar")))
    assert paused["text/plain"].startswith("churn <a>: paused from the sidebar, step 2,600")
    gone = snapshot_bundle(state_from_status(_status(status="interrupted")))
    assert INTERRUPTED_TEXT in gone["text/plain"]
    assert 'data-status="interrupted"' in gone["text/html"]
