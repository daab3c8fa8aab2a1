"""Optimizers, regularisation, gradient clipping and the ``learning_rate: auto`` heuristic.

Optimizers have Ludwig's names and parameters. They are torch.optim's own classes, run
eagerly: :func:`eager` subclasses one so that ``step``, ``zero_grad``, ``add_param_group``
and ``(load_)state_dict`` call torch's own undecorated methods (``inspect.unwrap``) instead
of their ``torch._dynamo`` wrappers. Those wrappers import ``torch._dynamo`` on first use
(1.5-2.5 s, more than importing torch itself, a third of a short run's whole process) only
to mark graph breaks that matter under ``torch.compile``. The math is torch's code,
unchanged (tests compare the parameters after a number of steps with plain torch.optim, for
every optimizer here). A ``compile: true`` run imports ``torch._dynamo`` anyway and uses the
classes as they are.

Ludwig's bitsandbytes optimizers (``adam_8bit``, ``paged_adamw``, ``lamb``, ``lars``, ``lion``
and the rest of :data:`BITSANDBYTES_OPTIMIZERS`) are bitsandbytes' own classes, imported when a
run asks for one (bitsandbytes >= 0.50 runs them on the CPU as well; importing it imports
``torch._dynamo`` itself, so they are used as they are).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch
from torch import nn
from torch._C._autograd import _profiler_enabled  # what record_function itself consults
from torch.optim import optimizer as _torch_optimizer

__all__ = [
    "BITSANDBYTES_OPTIMIZERS",
    "OPTIMIZERS",
    "auto_learning_rate",
    "build_optimizer",
    "clip_gradients",
    "eager",
    "penalty",
]

#: torch.optim.Optimizer methods whose torch._dynamo wrapper imports torch._dynamo
_DYNAMO_WRAPPED = ("zero_grad", "add_param_group", "state_dict", "load_state_dict")


def _unwrapped(method: Callable[..., Any]) -> Callable[..., Any] | None:
    """Return torch's own function under its decorators.

    None when it has none (a torch that no longer wraps it: the method is used as it is).
    """
    inner: Callable[..., Any] = inspect.unwrap(method)
    return None if inner is method else inner


def _grad_mode_step(raw_step: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``step`` as torch's ``_use_grad_for_differentiable`` does, without dynamo.

    Its ``torch._dynamo.graph_break()`` calls are left out (no-ops outside ``torch.compile``).
    """

    def step(self: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
        with torch.set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            return raw_step(self, *args, **kwargs)

    return step


def _observed(optimizer: torch.optim.Optimizer) -> bool:
    """Tell whether a profiler records or step hooks are registered.

    Hooks on this optimizer or global ones; ``step`` then goes through torch's own
    hook-and-label wrapper.
    """
    return bool(
        _profiler_enabled()
        or optimizer._optimizer_step_pre_hooks
        or optimizer._optimizer_step_post_hooks
        or _torch_optimizer._global_optimizer_pre_hooks
        or _torch_optimizer._global_optimizer_post_hooks
    )


def _eager_step(raw_step: Callable[..., Any]) -> Callable[..., Any]:
    """Build the eager ``step``.

    Torch's hooks and profiler label (``profile_hook_step``) when anything observes it, else
    straight to the update (the label's ``record_function``, with zero_grad's, cost ~10 % of a
    small model's step).
    """
    plain = _grad_mode_step(raw_step)
    hooked = torch.optim.Optimizer.profile_hook_step(plain)

    @functools.wraps(raw_step)
    def step(self: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
        return (hooked if _observed(self) else plain)(self, *args, **kwargs)

    step.hooked = True  # type: ignore[attr-defined]  # torch must not wrap it again
    return step


def _eager_zero_grad(raw: Callable[..., Any]) -> Callable[..., Any]:
    """Build the eager ``zero_grad``.

    With ``set_to_none`` (the default) and no profiler, the gradients are dropped as torch
    drops them, without its profiler label; otherwise torch's own runs.
    """

    @functools.wraps(raw)
    def zero_grad(self: torch.optim.Optimizer, set_to_none: bool = True) -> None:
        if not set_to_none or _profiler_enabled():
            raw(self, set_to_none)
            return
        for group in self.param_groups:
            for param in group["params"]:
                param.grad = None

    return zero_grad


_EAGER: dict[str, type[torch.optim.Optimizer]] = {}  # torch class's qualified name -> eager


def eager(cls: type[torch.optim.Optimizer]) -> type[torch.optim.Optimizer]:
    """Subclass ``cls`` so that nothing it runs imports ``torch._dynamo``.

    The methods that would are replaced by torch's undecorated ones; the math and the state
    dict are ``cls``'s own.

    Args:
        cls: A torch.optim optimizer class.

    Returns:
        The subclass (cached), or ``cls`` itself when torch has no such wrappers to skip.
    """
    key = f"{cls.__module__}.{cls.__qualname__}"
    if key not in _EAGER:
        _EAGER[key] = _eager_subclass(cls)
    return _EAGER[key]


def _eager_subclass(cls: type[torch.optim.Optimizer]) -> type[torch.optim.Optimizer]:
    methods: dict[str, Any] = {}
    for name in _DYNAMO_WRAPPED:
        inner = _unwrapped(getattr(cls, name))
        if inner is not None:
            methods[name] = _eager_zero_grad(inner) if name == "zero_grad" else inner
    raw_step = _unwrapped(cls.step)
    if raw_step is not None:
        methods["step"] = _eager_step(raw_step)
    if not methods:
        return cls
    methods["__doc__"] = cls.__doc__
    return type(cls.__name__, (cls,), methods)


_TORCH_OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    "sgd": torch.optim.SGD,
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
    "adagrad": torch.optim.Adagrad,
    "adadelta": torch.optim.Adadelta,
    "adamax": torch.optim.Adamax,
    "nadam": torch.optim.NAdam,
    "rmsprop": torch.optim.RMSprop,
}
#: Ludwig's optimizer names -> the eager torch.optim class
OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    name: eager(cls) for name, cls in _TORCH_OPTIMIZERS.items()
}
#: Ludwig's bitsandbytes optimizer names -> the class in ``bitsandbytes.optim``
BITSANDBYTES_OPTIMIZERS: dict[str, str] = {
    "sgd_8bit": "SGD8bit",
    "adam_8bit": "Adam8bit",
    "paged_adam": "PagedAdam",
    "paged_adam_8bit": "PagedAdam8bit",
    "adamw_8bit": "AdamW8bit",
    "paged_adamw": "PagedAdamW",
    "paged_adamw_8bit": "PagedAdamW8bit",
    "adagrad_8bit": "Adagrad8bit",
    "rmsprop_8bit": "RMSprop8bit",
    "lamb": "LAMB",
    "lamb_8bit": "LAMB8bit",
    "lars": "LARS",
    "lars_8bit": "LARS8bit",
    "lion": "Lion",
    "lion_8bit": "Lion8bit",
    "paged_lion": "PagedLion",
    "paged_lion_8bit": "PagedLion8bit",
}
_UNSTRUCTURED = frozenset({"text", "sequence", "image", "audio", "timeseries"})


def auto_learning_rate(config: Mapping[str, Any]) -> float:
    """Ludwig's heuristic.

    0.001 for tabular inputs, 1e-4 when an input is unstructured (text, sequence, ...) with a
    non-pretrained encoder (the only kind built in).
    """
    kinds = {f.get("type") for f in config.get("input_features") or []}
    return 1e-4 if kinds & _UNSTRUCTURED else 1e-3


def build_optimizer(
    params: Iterable[nn.Parameter],
    spec: Mapping[str, Any],
    learning_rate: float,
    compiled: bool = False,
) -> torch.optim.Optimizer:
    """The torch optimizer for ``trainer.optimizer``.

    Keys the class does not take (such as ``type``) are dropped.

    Args:
        params: The parameters to optimise (those without ``requires_grad`` are left out).
        spec: ``trainer.optimizer``: ``type`` and the class's keyword arguments.
        learning_rate: The initial learning rate.
        compiled: The run uses ``torch.compile``: the class keeps torch's ``torch._dynamo``
            wrappers (see the module docstring).

    Returns:
        The optimizer.

    Raises:
        ValueError: For an unknown type, or a bitsandbytes one without bitsandbytes installed.
    """
    name = spec.get("type") or "adam"
    cls: Any = _optimizer_class(name, compiled)
    accepted = set(inspect.signature(cls.__init__).parameters) - {"self", "params", "lr"}
    kwargs = {k: v for k, v in spec.items() if k in accepted and v is not None}
    if "betas" in kwargs:
        kwargs["betas"] = tuple(kwargs["betas"])
    optimizer: torch.optim.Optimizer = cls(
        [p for p in params if p.requires_grad], lr=learning_rate, **kwargs
    )
    return optimizer


def _optimizer_class(name: str, compiled: bool) -> Any:
    """The class for Ludwig's optimizer ``name`` (see :func:`build_optimizer`)."""
    if name in OPTIMIZERS:
        return (_TORCH_OPTIMIZERS if compiled else OPTIMIZERS)[name]
    if name not in BITSANDBYTES_OPTIMIZERS:
        raise ValueError(f"optimizer {name!r} is not available in the built-in engine")
    try:
        import bitsandbytes.optim
    except ImportError as err:  # what the capability check reports before a run
        raise ValueError(
            f'optimizer {name!r} needs bitsandbytes >= 0.50: pip install "bitsandbytes>=0.50"'
        ) from err
    return getattr(bitsandbytes.optim, BITSANDBYTES_OPTIMIZERS[name])


def penalty(module: nn.Module, kind: str | None, strength: float) -> torch.Tensor | None:
    """``regularization_type`` l1 / l2 / l1_l2 times ``regularization_lambda``; None when 0."""
    if not strength or kind is None:
        return None
    weights = [p for p in module.parameters() if p.requires_grad]
    total = torch.zeros((), device=weights[0].device)
    if kind in ("l1", "l1_l2"):
        total = total + sum(p.abs().sum() for p in weights)
    if kind in ("l2", "l1_l2"):
        total = total + sum(p.pow(2).sum() for p in weights)
    return strength * total


def clip_gradients(params: list[nn.Parameter], spec: Mapping[str, Any] | None) -> None:
    """``gradient_clipping`` over ``params``, as Ludwig 0.11 applies it.

    ``clipglobalnorm`` and ``clipnorm`` both bound the norm of all the gradients together
    (Ludwig clips the same way for both), ``clipvalue`` each element.
    """
    if not spec:
        return
    for key in ("clipglobalnorm", "clipnorm"):
        if spec.get(key):
            torch.nn.utils.clip_grad_norm_(params, float(spec[key]))
    if spec.get("clipvalue"):
        torch.nn.utils.clip_grad_value_(params, float(spec["clipvalue"]))
