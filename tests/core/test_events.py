import json

import pytest

from ludwig_nb.core import events as ev

SCHEDULE = ev.ScheduleInfo(
    total_steps=20,
    steps_per_epoch=10,
    epochs=2,
    epoch_starts=(0, 10),
    evaluations_after=(9, 19),
    checkpoints_after=(9, 19),
    batch_size=32,
)
SAMPLES = [
    ev.RunStarted(
        time=1.0, run_id="r-1", name="r", engine="builtin", device="cpu", schedule=SCHEDULE
    ),
    ev.RunStarted(
        time=1.0,
        run_id="r-1",
        name="r",
        engine="ludwig",
        device="cuda:1",
        schedule=SCHEDULE,
        host="node-3",
        device_index=1,
    ),
    ev.PhaseChanged(time=1.5, phase="training"),
    ev.PhaseChanged(time=1.5, phase="preprocessing", detail="importing Ludwig"),
    ev.StepFinished(
        time=2.0, step=0, epoch=0, start_time=1.9, batch_size=32, loss=0.7, learning_rate=1e-3
    ),
    ev.StepFinished(time=2.5, step=1, epoch=0, start_time=2.0, batch_size=32, loss=None),
    ev.EvaluationFinished(
        time=3.0,
        step=9,
        epoch=0,
        start_time=2.5,
        metrics={"validation": {"y": {"accuracy": 0.9}}},
        improved=True,
    ),
    ev.CheckpointSaved(time=3.2, step=9, start_time=3.1, path="/tmp/c", best=True),
    ev.Paused(time=4.0, step=10, reason="alarm:temperature"),
    ev.Resumed(time=6.0, step=10, paused_at=4.0),
    ev.AlarmRaised(
        time=4.0, rule="temperature", device=0, value=86.0, threshold=85.0, action="pause"
    ),
    ev.AlarmRaised(
        time=4.5, rule="margin<5", device=1, value=84.0, threshold=82.0, action="warn", margin=3.0
    ),
    ev.GpuSlowdown(
        time=5.0,
        device=0,
        active=True,
        share=0.4,
        causes=("thermal", "power_cap"),
        clock_ratio=0.8,
        text="GPU 0 throttled 40 % of the last minute (thermal 30 %, power cap 10 %)",
    ),
    ev.DeadlineWarning(
        time=5.5,
        kind="checkpoint",
        deadline=7200.0,
        verdict="late",
        message="saving a checkpoint before your session ends (02:00)",
    ),
    ev.AlarmCleared(time=6.0, rule="temperature", device=0, value=79.0),
    ev.ScheduleChanged(time=7.0, schedule=SCHEDULE, reason="early stopping"),
    ev.Throttled(
        time=6.5,
        duty=0.7,
        reason="alarm:temperature",
        device=0,
        metric="temperature",
        value=82.0,
        target=82.0,
        idle_s=3.5,
    ),
    ev.StepFinished(
        time=2.5,
        step=3,
        epoch=0,
        start_time=2.4,
        batch_size=8,
        loss=1.5,
        learning_rate=0.0002,
        tokens=220,
        padded_tokens=256,
    ),
    ev.ModelDescribed(
        time=0.9,
        base_model="HuggingFaceTB/SmolLM2-135M",
        architecture="llama",
        trainable=921_600,
        total=135_436_608,
        adapter="lora",
        quantization="4-bit",
        dtype="torch.bfloat16",
        estimate_bytes=2_000_000_000,
    ),
    ev.TokensCounted(
        time=0.8,
        splits={"training": {"rows": 700, "tokens": 9100, "longest": 31, "truncated": 2}},
        limit=30,
    ),
    ev.EpochPlanned(time=1.0, epoch=0, first_step=0, padded_tokens=(96, 128), tokens=(80, 101)),
    ev.SamplesGenerated(
        time=4.0,
        step=9,
        split="validation",
        samples=({"prompt": "Review: fine", "expected": "positive", "generated": "positive"},),
    ),
    ev.OomRecovered(time=6.8, step=12, batch_size=64, micro_batch_size=32, accumulation=2),
    ev.RunFinished(time=8.0, status="completed", step=20, best_metrics={"validation": {}}),
    ev.RunFailed(time=8.0, step=3, error_type="ValueError", message="bad", traceback="tb"),
    ev.BaselineComputed(
        time=0.5,
        metrics={"test": {"churn": {"accuracy": 0.86}}},
        predictors={"churn": "always 'no'"},
    ),
    ev.DataProgress(
        time=0.2,
        stage="preprocessing",
        source="demo:churn",
        rows=3500,
        columns=21,
        feature="total_day_minutes",
        index=2,
        total=4,
    ),
    ev.WorkersReported(
        time=9.0,
        workers=(
            {
                "rank": 0,
                "host": "node-a",
                "node_id": "ab12",
                "device": "cuda:0",
                "gpu": 3,
                "steps": 40,
                "steps_per_s": 12.5,
                "idle_s": 0.0,
                "age_s": 0.4,
            },
            {
                "rank": 1,
                "host": "node-b",
                "node_id": "cd34",
                "device": "cpu",
                "gpu": None,
                "steps": 39,
                "steps_per_s": None,
                "idle_s": 1.5,
                "age_s": 1.1,
            },
        ),
    ),
]


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.type)
def test_json_round_trip(event):
    line = event.to_json()
    data = json.loads(line)
    assert data["type"] == event.type and data["v"] == ev.EVENT_VERSION
    assert ev.event_from_json(line) == event


def test_every_event_type_is_registered_once():
    assert {type(e) for e in SAMPLES} == set(ev.EVENT_TYPES.values())


def test_unknown_type_is_rejected():
    with pytest.raises(ValueError, match="unknown event type 'nope'"):
        ev.event_from_dict({"type": "nope", "time": 0})


def test_events_are_immutable():
    with pytest.raises(AttributeError):
        SAMPLES[2].loss = 0.0  # type: ignore[misc]


@pytest.mark.parametrize(
    "fields",
    [
        {"loss": 0.6931471805599453, "learning_rate": 1e-3},
        {"loss": None, "learning_rate": None},
        {"loss": 1e-320, "learning_rate": -0.0},  # subnormal, negative zero
        {"loss": 1e308, "learning_rate": 123456789.123},
        {"loss": float("nan"), "learning_rate": 1e-3},  # the general path: null + the flag
        {"loss": float("inf"), "learning_rate": None},
        {"loss": 0.5, "batch_size": True},  # not a plain int: the general path
    ],
)
def test_a_step_line_is_the_text_the_general_encoder_writes(fields):
    """StepFinished formats its line itself (it is written at every step); the text must be
    exactly what ``Event.to_json`` writes, non-finite losses included."""
    np = pytest.importorskip("numpy")
    base = {
        "time": 1.7e9 + 0.123,
        "step": 41,
        "epoch": 2,
        "start_time": 1.7e9,
        "batch_size": 128,
        "loss": 0.5,
        "learning_rate": None,
    }
    for value in (fields, {**fields, "loss": np.float64(0.25)}):
        event = ev.StepFinished(**{**base, **value})
        line = event.to_json()
        assert line == ev.Event.to_json(event)
        assert ev.event_from_dict(json.loads(line)).step == 41


def test_a_step_without_tokens_writes_no_token_fields():
    plain = ev.StepFinished(time=1.0, step=0, epoch=0, start_time=0.5, batch_size=4, loss=1.0)
    assert "tokens" not in plain.to_json()
    assert "tokens" not in json.dumps(plain.to_dict())
    counted = ev.StepFinished(
        time=1.0, step=0, epoch=0, start_time=0.5, batch_size=4, loss=1.0, tokens=10
    )
    assert json.loads(counted.to_json())["tokens"] == 10
