"""Out-of-memory recovery and pacing through the real step path of the built-in trainer.

The OOM is injected on CPU with the module's seam (``memory.fault_hook``), which raises
``torch.cuda.OutOfMemoryError`` before the forward pass of a chosen step, exactly where a
CUDA allocation would fail.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ludwig_nb.core.control import RunControl
from ludwig_nb.core.state import RunState, reduce_all
from ludwig_nb.engines.builtin import memory
from ludwig_nb.engines.builtin.memory import memory_fraction, oom_recovery_enabled
from tests.engines.builtin.conftest import make_config, table

FEATURES = (
    [{"name": "x", "type": "number"}, {"name": "colour", "type": "category"}],
    [{"name": "target", "type": "number"}],
)


def oom_at(step: int, above_rows: int):
    """A hook raising CUDA OOM for every forward pass of ``step`` with more rows."""
    calls: list[tuple[int, int]] = []

    def hook(at: int, rows: int) -> None:
        calls.append((at, rows))
        if at == step and rows > above_rows:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    return hook, calls


def losses(result) -> list[float]:
    return [e.loss for e in result.of("step_finished")]


def test_oom_mid_run_splits_the_batch_and_completes(run_engine, monkeypatch):
    config = make_config(*FEATURES, batch_size=32, epochs=3)
    config["gpu_watch"]["oom_recovery"] = True
    data = table(rows=128)
    whole = run_engine(config, data)

    hook, calls = oom_at(step=4, above_rows=16)
    monkeypatch.setattr(memory, "fault_hook", hook)
    recovered = run_engine(config, data)

    steps = recovered.of("step_finished")
    assert [e.step for e in steps] == [e.step for e in whole.of("step_finished")]  # no loss
    assert recovered.of("run_finished")[0].status == "completed"
    event = recovered.of("oom_recovered")[0]
    assert (event.step, event.batch_size, event.micro_batch_size, event.accumulation) == (
        4,
        32,
        16,
        2,
    )
    assert "same effective batch" in event.message
    # step 4 was tried whole once, then redone as two halves; later steps run in halves
    assert calls.count((4, 32)) == 1 and calls.count((4, 16)) == 2
    assert all(rows <= 16 for at, rows in calls if at > 4)
    sizes = {e.step: e.batch_size for e in whole.of("step_finished")}
    assert all(e.batch_size == sizes[e.step] for e in steps)  # each step's batch unchanged
    # the same rows, the same mean gradient: the losses follow the whole-batch run
    np.testing.assert_allclose(losses(recovered), losses(whole), rtol=1e-4, atol=1e-6)
    state = reduce_all(recovered.events, RunState())
    assert state.micro_batch_size == 16


def test_losses_match_an_uninterrupted_run_split_from_that_step(run_engine, monkeypatch):
    config = make_config(*FEATURES, batch_size=32, epochs=2)
    config["gpu_watch"]["oom_recovery"] = True
    data = table(rows=96)
    monkeypatch.setattr(memory, "fault_hook", oom_at(step=3, above_rows=16)[0])
    recovered = run_engine(config, data)
    # the reference: no OOM at all, micro-batches of 16 from step 3 on
    monkeypatch.setattr(memory, "fault_hook", None)
    original = memory.MicroBatcher.run

    def split_at_3(self, step, batch, accumulate, sync, fb):
        if step == 3:
            self.parts = 2
        return original(self, step, batch, accumulate, sync, fb)

    monkeypatch.setattr(memory.MicroBatcher, "run", split_at_3)
    reference = run_engine(config, data)
    assert not reference.of("oom_recovered")
    assert losses(recovered) == losses(reference)


def test_second_oom_splits_again(run_engine, monkeypatch):
    config = make_config(*FEATURES, batch_size=32, epochs=2)
    config["gpu_watch"]["oom_recovery"] = True
    monkeypatch.setattr(memory, "fault_hook", oom_at(step=1, above_rows=8)[0])
    result = run_engine(config, table(rows=96))
    assert [e.micro_batch_size for e in result.of("oom_recovered")] == [16, 8]
    assert result.of("run_finished")[0].status == "completed"


def test_oom_without_recovery_fails_with_advice(run_engine, monkeypatch):
    config = make_config(*FEATURES, batch_size=32, epochs=2)  # fixed size: recovery off
    assert not oom_recovery_enabled(config)
    monkeypatch.setattr(memory, "fault_hook", oom_at(step=1, above_rows=0)[0])
    with pytest.raises(memory.OutOfMemory, match=r"lower trainer\.batch_size.*oom_recovery"):
        run_engine(config, table(rows=96))


def test_recovery_defaults_on_for_auto_batch_size():
    assert oom_recovery_enabled(make_config(*FEATURES, batch_size="auto"))
    config = make_config(*FEATURES, batch_size="auto")
    config["gpu_watch"]["oom_recovery"] = False
    assert not oom_recovery_enabled(config)


def test_memory_fraction():
    gib = 1 << 30
    assert memory_fraction(0.5, 16 * gib) == 0.5
    assert memory_fraction(4096, 16 * gib) == 0.25  # MiB
    with pytest.raises(ValueError, match="more than the GPU"):
        memory_fraction(32768, 16 * gib)
    with pytest.raises(ValueError, match="> 0"):
        memory_fraction(0, 16 * gib)


def test_paced_run_is_identical_to_an_unpaced_one(run_engine):
    """Throttling only spaces steps: same seed, same losses, same weights."""
    config = make_config(*FEATURES, batch_size=16, epochs=2)
    data = table(rows=96)
    plain = run_engine(config, data)
    now, idled = [0.0], []

    def clock() -> float:
        now[0] += 0.01  # every read moves virtual time: steps "take" time
        return now[0]

    control = RunControl(clock=clock, sleep=idled.append)
    control.set_pace(0.5, "alarm:test")
    paced = run_engine(config, data, control=control)
    assert losses(paced) == losses(plain)
    for key, value in plain.model.module.state_dict().items():
        assert torch.equal(value, paced.model.module.state_dict()[key])
    assert len(idled) >= len(losses(plain)) - 1  # it idled at (nearly) every boundary
    assert control.idle_seconds == pytest.approx(sum(idled)) and sum(idled) > 0


def test_split_survives_a_resume(run_engine, monkeypatch):
    config = make_config(*FEATURES, batch_size=32, epochs=4, checkpoints_per_epoch=2, early_stop=-1)
    config["gpu_watch"]["oom_recovery"] = True
    data = table(rows=128)
    hook, _ = oom_at(step=1, above_rows=16)
    monkeypatch.setattr(memory, "fault_hook", hook)
    control = RunControl()

    def on_event(event):
        if event.type == "checkpoint_saved" and event.step >= 3:
            control.stop()

    stopped = run_engine(config, data, control=control, on_event=on_event)
    assert stopped.of("oom_recovered")
    seen: list[int] = []
    monkeypatch.setattr(memory, "fault_hook", lambda step, rows: seen.append(rows))
    resumed = run_engine(config, data, resume_from=stopped.run_dir)
    assert resumed.of("run_finished")[0].status == "completed"
    assert seen and max(seen) <= 16  # resumed in micro-batches: no OOM to hit again
