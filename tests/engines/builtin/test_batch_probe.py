"""``eval_batch_size: auto`` and ``batch_size: auto``: the probes, on a virtual timer, and
the phase a run shows while probing."""

from __future__ import annotations

import torch

from ludwig_nb.engines.builtin.batch_probe import eval_candidate_sizes, probe_eval_batch_size
from tests.engines.builtin.conftest import make_config, table


def test_eval_probe_stops_at_out_of_memory_and_keeps_the_fastest_that_fits():
    now = [0.0]
    tried = []

    def run_forward(rows: int) -> None:
        tried.append(rows)
        if rows > 256:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory.")
        now[0] += 0.001 + rows * 1e-5  # fixed overhead: bigger batches are faster per row

    sizes = eval_candidate_sizes(32, rows=10_000, on_cuda=True)
    assert sizes == [32, 64, 128, 256, 512, 1024, 2048, 4096]
    assert probe_eval_batch_size(run_forward, sizes, budget=100, timer=lambda: now[0]) == 256
    assert max(tried) == 512  # it stopped at the first size that did not fit


def test_eval_probe_prefers_speed_under_the_memory_bound():
    now = [0.0]

    def run_forward(rows: int) -> None:  # slower per row past 128 (cache effects)
        now[0] += rows * (1e-5 if rows <= 128 else 3e-5)

    sizes = [32, 64, 128, 256, 512]
    # equal speed up to 128, slower above: the first of the fastest wins, none above 128
    assert probe_eval_batch_size(run_forward, sizes, budget=100, timer=lambda: now[0]) <= 128


def test_eval_candidates_capped_by_rows_and_device():
    assert eval_candidate_sizes(16, rows=100, on_cuda=False) == [16, 32, 64]
    assert eval_candidate_sizes(512, rows=100, on_cuda=False) == [512]
    assert eval_candidate_sizes(16, rows=10**6, on_cuda=False)[-1] == 1024


def test_auto_sizes_show_a_probing_phase(run_engine):
    config = make_config(
        [{"name": "x", "type": "number"}],
        [{"name": "label", "type": "binary"}],
        batch_size="auto",
        eval_batch_size="auto",
        epochs=1,
    )
    result = run_engine(config, table(rows=120))
    details = [e.detail for e in result.of("phase_changed") if e.phase == "preprocessing"]
    assert "probing batch_size and eval_batch_size on cpu" in details
    assert result.of("run_finished")[0].status == "completed"
