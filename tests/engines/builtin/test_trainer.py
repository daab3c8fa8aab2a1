"""Stop, pause/resume, failures and reproducibility of the training loop (no sleeps:
control is driven from the emit callback, which runs in the training thread)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ludwig_nb.core.control import RunControl
from ludwig_nb.core.events import StepFinished
from ludwig_nb.engines.builtin import TrainingDiverged
from tests.engines.builtin.conftest import make_config, table

NUMBER_TO_BINARY = ([{"name": "x", "type": "number"}], [{"name": "label", "type": "binary"}])


def test_stop_lands_within_one_step_and_keeps_the_model(run_engine):
    control = RunControl()

    def on_event(event):
        if isinstance(event, StepFinished) and event.step == 5:
            control.stop()

    config = make_config(*NUMBER_TO_BINARY, epochs=50)
    result = run_engine(config, table(rows=80), control=control, on_event=on_event)
    steps = result.of("step_finished")
    assert steps[-1].step == 5
    finished = result.of("run_finished")[0]
    assert (finished.status, finished.reason, finished.step) == ("stopped", "stopped by user", 6)
    assert (result.run_dir / "model" / "model_weights.pt").is_file()
    assert (result.run_dir / "checkpoints" / "latest.ckpt").is_file()
    assert (result.run_dir / "checkpoints" / "best.ckpt").is_file()  # from the eval at step 3
    assert len(result.model.predict(table(rows=10))) == 10


def test_pause_holds_steps_until_resume(run_engine):
    control = RunControl()
    log: list[str] = []

    def on_event(event):
        log.append(event.type)
        if isinstance(event, StepFinished) and event.step == 2:
            control.pause("user")
        if event.type == "paused":
            control.resume("user")  # released from inside the pause: no thread, no sleep

    result = run_engine(make_config(*NUMBER_TO_BINARY), table(rows=80), control, on_event)
    paused, resumed = result.of("paused")[0], result.of("resumed")[0]
    assert (paused.step, paused.reason, resumed.step) == (3, "user", 3)
    at = log.index("paused")
    assert log[at + 1] == "resumed"  # no step ran while paused
    assert resumed.paused_at == paused.time
    assert len(result.of("step_finished")) == 8
    assert result.of("run_finished")[0].status == "completed"


def test_stop_while_paused_ends_the_run(run_engine):
    control = RunControl()

    def on_event(event):
        if isinstance(event, StepFinished) and event.step == 1:
            control.pause("alarm:temperature")
        if event.type == "paused":
            control.stop("alarm: GPU too hot")

    result = run_engine(make_config(*NUMBER_TO_BINARY), table(rows=80), control, on_event)
    assert len(result.of("step_finished")) == 2
    finished = result.of("run_finished")[0]
    assert (finished.status, finished.reason) == ("stopped", "stopped: alarm: GPU too hot")


def test_poll_runs_at_every_step_boundary_and_its_errors_propagate(run_engine):
    calls = []

    def poll():
        calls.append(1)
        if len(calls) == 4:
            raise RuntimeError("control file unreadable")

    with pytest.raises(RuntimeError, match="control file unreadable"):
        run_engine(make_config(*NUMBER_TO_BINARY), table(rows=80), control=RunControl(poll=poll))
    assert len(calls) == 4


def test_exception_in_emit_propagates(run_engine):
    def on_event(event):
        if isinstance(event, StepFinished):
            raise KeyError("recorder broke")

    with pytest.raises(KeyError, match="recorder broke"):
        run_engine(make_config(*NUMBER_TO_BINARY), table(rows=80), on_event=on_event)


def test_nan_loss_fails_with_a_clear_error_and_keeps_the_last_checkpoint(run_engine, tmp_path):
    frame = table(rows=80)
    frame["target"] = frame["target"] * 1e30  # squares overflow float32: loss is inf
    config = make_config(
        [{"name": "x", "type": "number"}],
        [{"name": "target", "type": "number"}],
        learning_rate=0.001,
    )
    with pytest.raises(TrainingDiverged, match=r"loss became (inf|nan) at step 0"):
        run_engine(config, frame)


def _losses(run_engine, seed: int) -> list[float]:
    config = make_config(
        [{"name": "x", "type": "number"}, {"name": "colour", "type": "category"}],
        [{"name": "label", "type": "binary"}],
    )
    config["random_seed"] = seed  # Ludwig's train(random_seed=...), see engines.base.job_seed
    result = run_engine(config, table(rows=80))
    return [s.loss for s in result.of("step_finished")]


def test_seeded_runs_are_reproducible(run_engine):
    first, second = _losses(run_engine, 7), _losses(run_engine, 7)
    assert first == second
    assert _losses(run_engine, 8) != first


def test_resume_continues_at_the_saved_step_with_the_same_state(run_engine, tmp_path):
    config = make_config(
        [{"name": "x", "type": "number"}, {"name": "colour", "type": "category"}],
        [{"name": "label", "type": "binary"}],
        epochs=4,
        checkpoints_per_epoch=2,
        early_stop=-1,
    )
    data = table(rows=80)
    full = run_engine(config, data)
    control = RunControl()

    def on_event(event):
        if event.type == "checkpoint_saved" and event.step == 5:
            control.stop()

    stopped = run_engine(config, data, control=control, on_event=on_event)
    assert stopped.of("run_finished")[0].step == 6
    saved = torch.load(stopped.run_dir / "checkpoints" / "latest.ckpt", weights_only=True)
    assert saved["step"] == 6 and saved["optimizer"]["state"]
    resumed = run_engine(config, data, resume_from=stopped.run_dir)
    assert resumed.of("run_started")[0].start_step == 6
    assert [s.step for s in resumed.of("step_finished")] == list(range(6, 16))
    tail = [s.loss for s in full.of("step_finished")][6:]
    assert [s.loss for s in resumed.of("step_finished")] == pytest.approx(tail, rel=1e-5)
    a = full.model.module.state_dict()
    b = resumed.model.module.state_dict()
    assert all(np.allclose(a[k].numpy(), b[k].numpy(), atol=1e-6) for k in a)


def test_a_crashed_run_resumes_from_its_last_periodic_checkpoint(run_engine, tmp_path):
    config = make_config(*NUMBER_TO_BINARY, epochs=3, early_stop=-1)
    data = table(rows=80)

    def crash(event):
        if isinstance(event, StepFinished) and event.step == 9:
            raise SystemError("kernel died")  # nothing is saved on the way out

    with pytest.raises(SystemError):
        run_engine(config, data, on_event=crash, run_dir=tmp_path / "crashed")
    resumed = run_engine(config, data, resume_from=tmp_path / "crashed")
    assert resumed.of("run_started")[0].start_step == 8  # checkpoint after step 7
    assert [s.step for s in resumed.of("step_finished")] == [8, 9, 10, 11]
    assert (resumed.run_dir / "checkpoints" / "best.ckpt").is_file()  # carried over


def test_nan_after_a_checkpoint_names_the_last_good_one(run_engine, monkeypatch):
    from ludwig_nb.engines.builtin.model import Objective

    original = Objective.__call__
    calls = []

    def poisoned(self, outputs, targets):
        if torch.is_grad_enabled():  # training steps only, not evaluations
            calls.append(1)
        total, parts = original(self, outputs, targets)
        return (total * float("nan"), parts) if len(calls) == 6 else (total, parts)

    monkeypatch.setattr(Objective, "__call__", poisoned)
    with pytest.raises(
        TrainingDiverged, match=r"step 5; .*after step 3, is .*latest\.ckpt"
    ) as info:
        run_engine(make_config(*NUMBER_TO_BINARY, epochs=3), table(rows=80))
    assert "\n" not in str(info.value)


def _read_rarely(monkeypatch):
    """Losses read as on a GPU with a long display frame: only at evaluations and the end."""
    from ludwig_nb.engines.builtin import trainer

    monkeypatch.setattr(trainer, "loss_sync_interval", lambda device: 1e9)


def test_losses_read_once_per_frame_give_the_same_step_events(run_engine, monkeypatch):
    config = make_config(*NUMBER_TO_BINARY, epochs=3)
    every_step = run_engine(config, table(rows=80))
    _read_rarely(monkeypatch)
    batched = run_engine(config, table(rows=80))

    def fields(result):
        return [
            (s.step, s.epoch, s.batch_size, s.loss, s.learning_rate)
            for s in result.of("step_finished")
        ]

    assert fields(batched) == fields(every_step)
    kinds = [e.type for e in batched.events if e.type in ("step_finished", "evaluation_finished")]
    assert kinds == [
        e.type for e in every_step.events if e.type in ("step_finished", "evaluation_finished")
    ]
    assert [s.time >= s.start_time for s in batched.of("step_finished")] == [True] * 12


def test_a_nan_read_late_still_names_its_own_step(run_engine, monkeypatch):
    from ludwig_nb.engines.builtin.model import Objective

    original = Objective.__call__
    calls = []

    def poisoned(self, outputs, targets):
        if torch.is_grad_enabled():
            calls.append(1)
        total, parts = original(self, outputs, targets)
        return (total * float("nan"), parts) if len(calls) == 2 else (total, parts)

    monkeypatch.setattr(Objective, "__call__", poisoned)
    _read_rarely(monkeypatch)
    steps = []

    def on_event(event):
        if event.type == "step_finished":
            steps.append(event.step)

    with pytest.raises(TrainingDiverged, match=r"loss became nan at step 1; .*no checkpoint"):
        run_engine(make_config(*NUMBER_TO_BINARY, epochs=3), table(rows=80), on_event=on_event)
    assert steps == [0]


def test_a_stop_flushes_the_steps_not_yet_shown(run_engine, monkeypatch):
    _read_rarely(monkeypatch)
    polls = iter(range(100))
    training = []  # set once the loop starts (the control is also polled during setup)

    def poll():
        if training and next(polls) == 3:  # before step 3
            control.stop()

    def on_event(event):
        if event.type == "phase_changed" and event.phase == "training":
            training.append(True)

    control = RunControl(poll=poll)
    result = run_engine(
        make_config(*NUMBER_TO_BINARY, epochs=50),
        table(rows=80),
        control=control,
        on_event=on_event,
    )
    assert [s.step for s in result.of("step_finished")] == [0, 1, 2]
    assert result.of("run_finished")[0].step == 3


def test_a_bitsandbytes_optimizer_trains_and_resumes_from_its_checkpoint(run_engine):
    pytest.importorskip("bitsandbytes.optim", reason="needs bitsandbytes >= 0.50")
    config = make_config(
        [{"name": "x", "type": "number"}, {"name": "colour", "type": "category"}],
        [{"name": "label", "type": "binary"}],
        epochs=4,
        early_stop=-1,
        optimizer={"type": "lion_8bit"},
    )
    data = table(rows=80)
    full = run_engine(config, data)
    losses = [s.loss for s in full.of("step_finished")]
    assert full.of("run_finished")[0].status == "completed"
    assert sum(losses[-4:]) < sum(losses[:4])
    control = RunControl()

    def on_event(event):
        if event.type == "checkpoint_saved" and event.step == 7:
            control.stop()

    stopped = run_engine(config, data, control=control, on_event=on_event)
    saved = torch.load(stopped.run_dir / "checkpoints" / "latest.ckpt", weights_only=True)
    assert saved["step"] == 8 and saved["optimizer"]["state"]
    resumed = run_engine(config, data, resume_from=stopped.run_dir)
    assert [s.loss for s in resumed.of("step_finished")] == pytest.approx(losses[8:], rel=1e-5)
