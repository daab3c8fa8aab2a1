"""Optimizers by Ludwig name, regularisation, clipping, auto learning rate, batch probe."""

from __future__ import annotations

import contextlib

import pytest
import torch

from ludwig_nb.engines.builtin.optim import (
    BITSANDBYTES_OPTIMIZERS,
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


def _trained(cls, spec, steps=5, zero_to_none=True):
    """A small model after ``steps`` updates by ``cls``: its parameters and the state."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    optimizer = cls(model.parameters(), lr=0.05, **spec)
    data = torch.randn(16, 4)
    for _ in range(steps):
        model(data).pow(2).mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=zero_to_none)
    return [p.detach().clone() for p in model.parameters()], optimizer


_SPECS = {"sgd": {"momentum": 0.9}, "adam": {"weight_decay": 0.01}, "adamw": {"amsgrad": True}}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("zero_to_none", [True, False])
def test_the_eager_optimizers_do_torch_optims_math(name, zero_to_none):
    spec = _SPECS.get(name, {})
    ours, ours_opt = _trained(OPTIMIZERS[name], spec, zero_to_none=zero_to_none)
    torch_cls = next(c for c in OPTIMIZERS[name].__mro__[1:] if c.__module__.startswith("torch"))
    theirs, theirs_opt = _trained(torch_cls, spec, zero_to_none=zero_to_none)
    assert OPTIMIZERS[name] is not torch_cls and issubclass(OPTIMIZERS[name], torch_cls)
    for mine, reference in zip(ours, theirs, strict=True):
        torch.testing.assert_close(mine, reference, rtol=0, atol=0)
    # the state dicts are torch's own and load into either class
    theirs_opt.load_state_dict(ours_opt.state_dict())
    state = ours_opt.state_dict()["state"]
    assert set(state) == set(theirs_opt.state_dict()["state"])


def test_step_hooks_and_the_profiler_label_still_work():
    layer = torch.nn.Linear(2, 1)
    optimizer = build_optimizer(layer.parameters(), {"type": "adam"}, 0.1)
    seen = []
    optimizer.register_step_pre_hook(lambda opt, args, kwargs: seen.append("pre"))
    optimizer.register_step_post_hook(lambda opt, args, kwargs: seen.append("post"))
    layer(torch.ones(1, 2)).sum().backward()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        optimizer.step()
        optimizer.zero_grad()
    assert seen == ["pre", "post"]
    names = {e.name for e in prof.events()}
    assert "Optimizer.step#Adam.step" in names and "Optimizer.zero_grad#Adam.zero_grad" in names
    assert layer.weight.grad is None


def test_a_compiled_run_keeps_torchs_own_classes():
    optimizer = build_optimizer(torch.nn.Linear(1, 1).parameters(), {}, 0.1, compiled=True)
    assert type(optimizer) is torch.optim.Adam


def test_training_with_the_optimizers_never_imports_torch_dynamo():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[3])  # this checkout's ludwig_nb, not another
    code = (
        "import sys, torch\n"
        "from ludwig_nb.engines.builtin.optim import OPTIMIZERS, build_optimizer\n"
        "for name in OPTIMIZERS:\n"
        "    layer = torch.nn.Linear(2, 1)\n"
        "    opt = build_optimizer(layer.parameters(), {'type': name}, 0.1)\n"
        "    layer(torch.ones(1, 2)).sum().backward(); opt.step(); opt.zero_grad()\n"
        "    opt.load_state_dict(opt.state_dict())\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": root},
    )
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------ bitsandbytes' optimizers


def _ludwig_spec(name: str) -> dict:
    """``trainer.optimizer`` as Ludwig renders it for ``type: name`` (its own defaults)."""
    from tests.engines.builtin.conftest import make_config

    inputs, outputs = [{"name": "x", "type": "number"}], [{"name": "y", "type": "number"}]
    spec = make_config(inputs, outputs, optimizer={"type": name})["trainer"]["optimizer"]
    if name == "sgd_8bit":
        spec["momentum"] = 0.9  # bitsandbytes has no 8-bit SGD without momentum
    return spec


@pytest.mark.parametrize("name", sorted(BITSANDBYTES_OPTIMIZERS))
def test_bitsandbytes_optimizers_run_with_ludwigs_defaults(name):
    bnb = pytest.importorskip("bitsandbytes.optim", reason="needs bitsandbytes >= 0.50")
    spec = _ludwig_spec(name)
    torch.manual_seed(0)
    # 64 x 64 weights: at bitsandbytes' min_8bit_size (4096), so 8-bit states are used
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    optimizer = build_optimizer(model.parameters(), spec, 0.01)
    assert type(optimizer) is getattr(bnb, BITSANDBYTES_OPTIMIZERS[name])
    group = optimizer.param_groups[0]
    assert group["lr"] == 0.01
    for key in ("betas", "momentum", "max_unorm", "eps", "weight_decay"):
        if key in group and key in spec:
            assert group[key] == pytest.approx(tuple(spec[key]) if key == "betas" else spec[key])
    data = torch.randn(32, 64)
    target = data[:, :1] * 0.5
    losses = []
    # on the CPU bitsandbytes keeps a paged optimizer's states in ordinary memory, and says so
    paged = name.startswith("paged_")
    with pytest.warns(UserWarning, match="Paged") if paged else contextlib.nullcontext():
        for _ in range(40):
            loss = (model(data) - target).pow(2).mean()
            losses.append(loss.item())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    assert losses[-1] < 0.5 * losses[0], losses[::8]
    state = optimizer.state[model[0].weight]
    if name.endswith("_8bit"):
        assert state["state1"].dtype == torch.uint8  # the states really are 8-bit
    again = build_optimizer(model.parameters(), spec, 0.01)
    again.load_state_dict(optimizer.state_dict())
    assert set(again.state_dict()["state"]) == set(optimizer.state_dict()["state"])


def test_a_bitsandbytes_optimizer_without_bitsandbytes_says_what_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_bitsandbytes(name, *args, **kwargs):
        if name.startswith("bitsandbytes"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_bitsandbytes)
    with pytest.raises(ValueError, match=r'lion.*pip install "bitsandbytes>=0.50"'):
        build_optimizer(torch.nn.Linear(1, 1).parameters(), {"type": "lion"}, 0.1)
