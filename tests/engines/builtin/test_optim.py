"""Optimizers by Ludwig name, regularisation, clipping, auto learning rate, batch probe."""

from __future__ import annotations

import pytest
import torch

from ludwig_nb.engines.builtin.batch_probe import candidate_sizes, probe_batch_size
from ludwig_nb.engines.builtin.optim import (
    OPTIMIZERS,
    auto_learning_rate,
    build_optimizer,
    clip_gradients,
    penalty,
)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_builds_and_steps(name):
    layer = torch.nn.Linear(3, 1)
    spec = {"type": name, "betas": [0.8, 0.9], "momentum": 0.5, "eps": 1e-7, "weight_decay": 0}
    optimizer = build_optimizer(layer.parameters(), spec, 0.1)
    before = layer.weight.detach().clone()
    layer(torch.ones(4, 3)).sum().backward()
    optimizer.step()
    assert not torch.equal(before, layer.weight)
    assert optimizer.param_groups[0]["lr"] == 0.1
    if "betas" in optimizer.defaults:
        assert optimizer.defaults["betas"] == (0.8, 0.9)


def test_unknown_optimizer_is_refused():
    with pytest.raises(ValueError, match="lbfgs"):
        build_optimizer(torch.nn.Linear(1, 1).parameters(), {"type": "lbfgs"}, 0.1)


def test_penalty_and_clipping():
    layer = torch.nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[3.0, -4.0]]))
    assert penalty(layer, "l2", 0.5).item() == pytest.approx(12.5)
    assert penalty(layer, "l1", 1.0).item() == pytest.approx(7.0)
    assert penalty(layer, "l2", 0.0) is None
    layer.weight.grad = torch.tensor([[30.0, 40.0]])
    clip_gradients([layer.weight], {"clipglobalnorm": 5.0})
    assert layer.weight.grad.norm().item() == pytest.approx(5.0)
    clip_gradients([layer.weight], {"clipvalue": 1.0})
    assert layer.weight.grad.abs().max().item() <= 1.0


def test_auto_learning_rate_follows_ludwig_heuristic():
    assert auto_learning_rate({"input_features": [{"type": "number"}]}) == 1e-3
    assert auto_learning_rate({"input_features": [{"type": "text"}]}) == 1e-4


def test_batch_probe_picks_the_fastest_with_a_fake_timer():
    now = [0.0]
    cost = {16: 1.0, 32: 1.0, 64: 1.5, 128: 4.0}  # seconds per step: 64 is fastest per row

    def run_steps(size, steps):
        now[0] += cost[size] * steps

    best = probe_batch_size(run_steps, [16, 32, 64, 128], budget=100, timer=lambda: now[0])
    assert best == 64
    assert candidate_sizes(rows=10_000, on_cuda=False, max_batch_size=None) == [16, 32, 64, 128]
    assert candidate_sizes(rows=200, on_cuda=False, max_batch_size=None) == [16, 32]
