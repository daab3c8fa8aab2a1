"""The built-in engine trains as Ludwig 0.11 trains: losses, optimizers, schedules, clipping.

Each loss the built-in engine runs gives Ludwig's value on the same predictions and targets;
each optimizer is Ludwig's torch class with Ludwig's settings and takes the same steps; each
learning-rate schedule gives Ludwig's ``LRScheduler`` rate at every step (warm-up, decays,
restarts, reductions on plateau); gradient clipping leaves the same gradients. Runs in the
Ludwig env (``scripts/ci/test_ludwig.sh``).
"""

from __future__ import annotations

import copy
import importlib
import warnings
from typing import Any

import pytest

pytestmark = pytest.mark.ludwig
pytest.importorskip("ludwig", reason="needs the Ludwig env (scripts/setup/ludwig_env.sh)")
importlib.import_module("ludwig.api")  # Ludwig's loss modules import in this order only

import torch  # noqa: E402

from ludwig_nb.engines.builtin.capabilities import BUILTIN_LOSSES, BUILTIN_OPTIMIZERS  # noqa: E402
from ludwig_nb.engines.builtin.losses import build_loss  # noqa: E402
from ludwig_nb.engines.builtin.optim import build_optimizer, clip_gradients  # noqa: E402
from ludwig_nb.engines.builtin.schedule import LearningRate, plan_training  # noqa: E402

_LUDWIG_LOSS = {
    "binary_weighted_cross_entropy": "BWCEWLossConfig",
    "softmax_cross_entropy": "SoftmaxCrossEntropyLossConfig",
    "sigmoid_cross_entropy": "SigmoidCrossEntropyLossConfig",
    "mean_squared_error": "MSELossConfig",
    "mean_absolute_error": "MAELossConfig",
    "root_mean_squared_error": "RMSELossConfig",
    "huber": "HuberLossConfig",
}
#: per loss: extra settings that change it
_LOSS_OPTIONS: dict[str, list[dict[str, Any]]] = {
    "binary_weighted_cross_entropy": [{}, {"positive_class_weight": 3.0}],
    "softmax_cross_entropy": [{}, {"class_weights": [1.0, 2.0, 0.5]}],
    "sigmoid_cross_entropy": [{}, {"class_weights": [1.0, 2.0, 0.5]}],
    "huber": [{}, {"delta": 0.3}],
}


def _loss_cases() -> list[Any]:
    cases = []
    for kind, names in BUILTIN_LOSSES.items():
        for name in names:
            for options in _LOSS_OPTIONS.get(name, [{}]):
                cases.append(pytest.param(kind, name, options, id=f"{kind}-{name}-{options}"))
    return cases


def _predictions(kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(3)
    rows = 64
    if kind == "binary":
        target = (torch.rand(rows, generator=generator) > 0.4).float()
        return torch.randn(rows, generator=generator), target
    if kind == "category":
        return torch.randn(rows, 3, generator=generator), torch.randint(0, 3, (rows,))
    if kind == "set":
        target = (torch.rand(rows, 3, generator=generator) > 0.5).float()
        return torch.randn(rows, 3, generator=generator), target
    if kind == "vector":
        return torch.randn(rows, 3, generator=generator), torch.randn(rows, 3)
    return torch.randn(rows, generator=generator), torch.randn(rows, generator=generator)


@pytest.mark.parametrize(("kind", "name", "options"), _loss_cases())
def test_same_loss(kind: str, name: str, options: dict[str, Any]) -> None:
    from ludwig.modules.loss_modules import create_loss
    from ludwig.schema.features.loss import loss as ludwig_losses

    config_cls = getattr(ludwig_losses, _LUDWIG_LOSS[name])
    theirs = create_loss(config_cls.from_dict({"type": name, **options}))
    meta = {"idx2str": ["a", "b", "c"]}
    ours, weight = build_loss({"type": kind, "loss": {"type": name, **options}}, meta)
    preds, target = _predictions(kind)
    expected = theirs(preds, target)
    torch.testing.assert_close(ours(preds, target), expected.reshape(()), rtol=1e-5, atol=1e-6)
    assert weight == 1.0


def _ludwig_optimizer(spec: dict[str, Any], model: torch.nn.Module, lr: float) -> Any:
    from ludwig.modules.optimization_modules import create_optimizer
    from ludwig.schema.optimizers import optimizer_registry

    config = optimizer_registry[spec["type"]][1].from_dict(spec)
    return create_optimizer(model, config, lr)


def _rendered_optimizer(name: str) -> dict[str, Any]:
    """The optimizer section as the config layer renders it (Ludwig's defaults)."""
    import yaml

    from ludwig_nb.config import load_config

    text = yaml.safe_dump(
        {
            "input_features": [{"name": "x", "type": "number"}],
            "output_features": [{"name": "y", "type": "number"}],
            "trainer": {"optimizer": {"type": name}},
        }
    )
    optimizer: dict[str, Any] = load_config(text).to_dict()["trainer"]["optimizer"]
    return optimizer


def _ludwig_builds_here(name: str) -> Any:
    """``name`` as a parameter, skipped where Ludwig 0.11 cannot build the optimizer.

    Ludwig accepts bitsandbytes' optimizers in its schema whenever bitsandbytes imports, but
    refuses to build them without a CUDA GPU (``optimization_modules.create_optimizer``: "Cannot
    use a paged or 8-bit optimizer on a non-GPU machine"); ours run on the CPU and are tested
    against bitsandbytes itself in tests/engines/builtin/test_optim.py.
    """
    import torch

    from ludwig_nb.engines.builtin.optimizer_support import BITSANDBYTES_OPTIMIZERS

    gpu_only = name in BITSANDBYTES_OPTIMIZERS and not torch.cuda.is_available()
    reason = "Ludwig 0.11 builds bitsandbytes' optimizers only on a CUDA GPU"
    return pytest.param(name, marks=pytest.mark.skipif(gpu_only, reason=reason))


@pytest.mark.parametrize("name", [_ludwig_builds_here(n) for n in BUILTIN_OPTIMIZERS])
def test_same_optimizer_and_steps(name: str) -> None:
    spec = _rendered_optimizer(name)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    twin = copy.deepcopy(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _ludwig_optimizer(spec, model, 0.01)
    ours = build_optimizer(twin.parameters(), spec, 0.01)
    assert isinstance(ours, type(theirs))
    shared = set(theirs.defaults) & set(ours.defaults)
    assert {k: theirs.defaults[k] for k in shared} == {k: ours.defaults[k] for k in shared}
    data = torch.randn(32, 4, generator=torch.Generator().manual_seed(1))
    for optimizer, net in ((theirs, model), (ours, twin)):
        for _ in range(5):
            optimizer.zero_grad()
            net(data).pow(2).mean().backward()
            optimizer.step()
    for a, b in zip(model.parameters(), twin.parameters(), strict=True):
        torch.testing.assert_close(a, b)


_SCHEDULES: dict[str, dict[str, Any]] = {
    "constant": {},
    "warmup-linear": {"warmup_fraction": 0.1, "decay": "linear"},
    "warmup-fraction-not-whole": {"warmup_fraction": 0.125, "decay": "linear"},
    "warmup-evaluations-exponential": {
        "warmup_evaluations": 2,
        "decay": "exponential",
        "decay_rate": 0.5,
        "decay_steps": 20,
    },
    "exponential-staircase": {
        "decay": "exponential",
        "decay_rate": 0.9,
        "decay_steps": 7,
        "staircase": True,
    },
    "cosine": {"decay": "cosine"},
    "cosine-restarts": {"decay": "cosine", "t_0": 9, "t_mult": 2, "eta_min": 0.001},
    "warmup-cosine": {"warmup_fraction": 0.2, "decay": "cosine", "t_0": 15},
}


class _Progress:
    """What Ludwig's ``LRScheduler.eval_step`` reads of its progress tracker."""

    def __init__(self) -> None:
        self.train_metrics: dict[str, Any] = {"y": {"loss": []}}
        self.validation_metrics: dict[str, Any] = {}
        self.test_metrics: dict[str, Any] = {}
        self.steps = 0
        self.last_learning_rate_reduction_steps = 0
        self.last_learning_rate_reduction = 0
        self.num_reductions_learning_rate = 0


def _rates(params: dict[str, Any], plateau: list[float] | None = None) -> tuple[list, list]:
    """Ludwig's and our rate at each step of 100 (10 per evaluation), and the metric fed in."""
    from ludwig.modules.lr_scheduler import LRScheduler
    from ludwig.schema.lr_scheduler import LRSchedulerConfig

    plan = plan_training({"epochs": 10}, 100, 10)  # 100 steps, an evaluation every 10
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    theirs = LRScheduler(LRSchedulerConfig.from_dict(params), optimizer, 10, 100)
    ours = LearningRate(0.1, params, plan)
    progress, expected, got = _Progress(), [], []
    for step in range(100):
        expected.append(optimizer.param_groups[0]["lr"])
        got.append(ours.at(step))
        optimizer.step()
        theirs.step()
        if plateau is not None and (step + 1) % 10 == 0:
            value = plateau[step // 10]
            progress.steps = step + 1
            progress.train_metrics["y"]["loss"].append((0, step + 1, value))
            theirs.eval_step(progress, "y")
            ours.observe(value, minimize=True, step=step)
    return expected, got


@pytest.mark.parametrize("name", sorted(_SCHEDULES))
def test_same_learning_rate_at_every_step(name: str) -> None:
    expected, got = _rates(_SCHEDULES[name])
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_same_reductions_on_plateau() -> None:
    params = {
        "decay": "linear",
        "reduce_on_plateau": 2,
        "reduce_on_plateau_patience": 1,
        "reduce_on_plateau_rate": 0.5,
    }
    # improves, stalls twice (one reduction), improves, stalls three times (the second one,
    # then no more: the limit is 2)
    losses = [1.0, 1.0, 1.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.2, 0.3]
    expected, got = _rates(params, losses)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert min(got[1:]) < 0.1 * 0.25 * 1.01  # it did reduce, twice


@pytest.mark.parametrize(
    "spec",
    [
        {"clipglobalnorm": 0.5},
        {"clipglobalnorm": None, "clipnorm": 0.3},
        {"clipglobalnorm": None, "clipvalue": 0.01},
    ],
)
def test_same_gradient_clipping(spec: dict[str, Any]) -> None:
    from ludwig.schema.optimizers import GradientClippingConfig
    from ludwig.trainers.trainer import Trainer

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 2))
    twin = copy.deepcopy(model)
    data = torch.randn(16, 4)
    for net in (model, twin):
        net(data).pow(2).sum().backward()

    class _Clipper:
        gradient_clipping_config = GradientClippingConfig.from_dict(spec)

    Trainer.clip_grads(_Clipper(), model.parameters())  # type: ignore[arg-type]
    clip_gradients(list(twin.parameters()), spec)
    for a, b in zip(model.parameters(), twin.parameters(), strict=True):
        assert a.grad is not None and b.grad is not None
        torch.testing.assert_close(a.grad, b.grad)


def _ludwig_metric(name: str, **kwargs: Any) -> Any:
    from ludwig import distributed
    from ludwig.modules import metric_modules

    try:  # Ludwig's metrics sync through its distributed strategy: a local one, as in a run
        distributed.get_current_dist_strategy()
    except RuntimeError:
        distributed.init_dist_strategy("local")

    return getattr(metric_modules, name)(**kwargs)


def _score(metric: Any, preds: torch.Tensor, target: torch.Tensor) -> float:
    metric.update(preds, target)
    return float(metric.compute())


def test_same_validation_metrics() -> None:
    """The metrics a run is validated by mean what Ludwig's mean (category accuracy: macro)."""
    import numpy as np

    from ludwig_nb.engines.builtin.metrics import feature_metrics

    generator = torch.Generator().manual_seed(5)
    prob = torch.rand(200, generator=generator)
    target = (torch.rand(200, generator=generator) < prob * 0.8 + 0.1).long()
    ours = feature_metrics("binary", target.numpy(), prob.numpy().astype(np.float64), {})
    for name, cls in (
        ("accuracy", "Accuracy"),
        ("precision", "PrecisionMetric"),
        ("recall", "RecallMetric"),
        ("specificity", "SpecificityMetric"),
        ("roc_auc", "BinaryAUROCMetric"),
    ):
        assert ours[name] == pytest.approx(_score(_ludwig_metric(cls), prob, target), abs=1e-6)

    logits = torch.randn(300, 5, generator=generator)
    classes = torch.randint(0, 5, (300,), generator=generator)
    probs = torch.softmax(logits, dim=1)
    ours = feature_metrics("category", classes.numpy(), probs.numpy().astype(np.float64), {})
    for name, cls in (
        ("accuracy", "CategoryAccuracy"),
        ("accuracy_micro", "CategoryAccuracyMicro"),
        ("roc_auc", "CategoryAUROCMetric"),
    ):
        theirs = _score(_ludwig_metric(cls, num_classes=5), probs, classes)
        assert ours[name] == pytest.approx(theirs, abs=1e-5), name
    hits = _score(_ludwig_metric("HitsAtKMetric", num_classes=5, top_k=3), logits, classes)
    assert ours["hits_at_k"] == pytest.approx(hits, abs=1e-6)

    truth = torch.randn(100, generator=generator)
    pred = truth + 0.5 * torch.randn(100, generator=generator)
    ours = feature_metrics("number", truth.numpy(), pred.numpy().astype(np.float64), {})
    for name, cls in (
        ("mean_squared_error", "MSEMetric"),
        ("mean_absolute_error", "MAEMetric"),
        ("root_mean_squared_error", "RMSEMetric"),
        ("r2", "R2Score"),
    ):
        assert ours[name] == pytest.approx(_score(_ludwig_metric(cls), pred, truth), rel=1e-5)
