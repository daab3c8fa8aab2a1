"""``batch_size: auto`` and ``eval_batch_size: auto``: sizes costed by counting, not timing.

The same config, data and seed pick the same sizes on a quiet and on a loaded machine (busy
processes run beside the probe here; nothing is timed), the rule climbs only while a larger batch
is clearly cheaper per row, and the pick reaches the run: its plan, the phase shown while
probing, and the note that says why.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from ludwig_nb.engines.builtin.batch_probe import (
    CPU,
    MachineKind,
    StepCost,
    candidate_sizes,
    choose,
    count_cost,
    eval_candidate_sizes,
)
from tests.engines.builtin.conftest import make_config, table


def test_candidates_capped_by_rows_device_and_max_batch_size():
    assert candidate_sizes(rows=10_000, on_cuda=False, max_batch_size=None) == [16, 32, 64, 128]
    assert candidate_sizes(rows=200, on_cuda=False, max_batch_size=None) == [16, 32]
    assert candidate_sizes(rows=10**6, on_cuda=True, max_batch_size=256)[-1] == 256
    assert eval_candidate_sizes(16, rows=100, on_cuda=False) == [16, 32, 64]
    assert eval_candidate_sizes(512, rows=100, on_cuda=False) == [512]
    assert eval_candidate_sizes(16, rows=10**6, on_cuda=False)[-1] == 1024


_UNIT = MachineKind("test", op_s=1.0, flops_per_s=1.0, bytes_per_s=1e30)


def _costs(fixed: float, per_row: float, sizes=(16, 32, 64, 128)) -> list[StepCost]:
    """Steps that cost ``fixed`` plus ``per_row`` for each row, in the unit model's seconds."""
    return [StepCost(rows, ops=int(fixed), flops=per_row * rows, bytes=0.0) for rows in sizes]


def test_the_fixed_cost_of_a_step_climbs_to_the_largest_size():
    pick = choose(_costs(fixed=1000, per_row=1), _UNIT)
    assert pick.size == 128
    assert "the largest candidate" in pick.reason
    assert "pin it with trainer.batch_size: 128" in pick.reason


def test_work_per_row_keeps_the_batch_small():
    # doubling 16 -> 32 saves (10/16 - 10/32) / (10/16 + 100) < 1 % per row: not worth it
    pick = choose(_costs(fixed=10, per_row=100), _UNIT)
    assert pick.size == 16
    assert "32 rows would cost 0% less per row" in pick.reason


def test_the_margin_decides_at_the_edge():
    # per row: 16 -> 1/16 + 1/16 = 0.125, 32 -> 1/32 + 1/16 = 0.094 (25 % less), 64 -> 0.078
    # (17 % less), 128 -> 0.070 (10 % less): the margin says how far the climb goes
    costs = _costs(fixed=1, per_row=1 / 16)
    assert choose(costs, _UNIT, margin=0.05).size == 128
    assert choose(costs, _UNIT, margin=0.15).size == 64
    assert choose(costs, _UNIT, margin=0.2).size == 32


def _model_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters())
    data = torch.randn(256, 8)

    def step(rows: int) -> None:
        loss = model(data[:rows]).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    step(16)  # the optimizer's state is created on its first step
    return step


def test_counts_are_exact_and_grow_with_the_rows():
    step = _model_step()
    first, again = count_cost(32, step), count_cost(32, step)
    assert first == again
    bigger = count_cost(64, step)
    assert bigger.ops == first.ops  # the same operations, on more rows
    assert bigger.flops > first.flops and bigger.bytes > first.bytes


@pytest.fixture
def busy_machine():
    """Two processes that keep every core of this machine busy while the test runs."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    yield
    for proc in procs:
        proc.kill()
        proc.wait()


def _auto_config():
    return make_config(
        [{"name": "x", "type": "number"}, {"name": "colour", "type": "category"}],
        [{"name": "label", "type": "binary"}],
        batch_size="auto",
        eval_batch_size="auto",
        epochs=1,
    )


def _picked(run_engine) -> tuple[int, int, str]:
    result = run_engine(_auto_config(), table(rows=800))
    schedule = result.of("run_started")[0].schedule
    return schedule.batch_size, schedule.eval_batch_size, schedule.batch_note


def test_the_pick_is_the_same_on_a_loaded_machine(run_engine, request):
    quiet = _picked(run_engine)
    request.getfixturevalue("busy_machine")
    loaded = _picked(run_engine)
    assert loaded == quiet
    batch_size, eval_batch_size, note = quiet
    assert batch_size in candidate_sizes(560, on_cuda=False, max_batch_size=None)
    assert f"batch_size auto: {batch_size}" in note
    assert f"eval_batch_size auto: {eval_batch_size}" in note
    assert "not by timing" in note


def test_auto_sizes_show_a_probing_phase(run_engine):
    result = run_engine(_auto_config(), table(rows=120))
    details = [e.detail for e in result.of("phase_changed") if e.phase == "preprocessing"]
    assert "probing batch_size and eval_batch_size on cpu" in details
    assert result.of("run_finished")[0].status == "completed"


def test_a_pinned_size_has_no_note(run_engine):
    config = make_config(
        [{"name": "x", "type": "number"}], [{"name": "label", "type": "binary"}], batch_size=16
    )
    schedule = run_engine(config, table(rows=120)).of("run_started")[0].schedule
    assert schedule.batch_size == 16 and schedule.batch_note == ""


def test_the_cpu_model_is_one_kind():
    assert CPU.name == "cpu" and CPU.seconds(StepCost(16, 10, 0.0, 0.0)) == pytest.approx(8e-5)
