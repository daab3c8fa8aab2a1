"""Parameter families shared by encoders, decoders and combiners (Ludwig 0.11 names/defaults)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ludwig_nb.config.schema.fields import (
    Ctx,
    FreeDict,
    ListOf,
    Param,
    Section,
    Spec,
    allowed_hint,
)
from ludwig_nb.config.yaml_positions import KeyPath

__all__ = [
    "ACTIVATIONS",
    "INITIALIZERS",
    "NORMS",
    "REDUCERS",
    "activation",
    "dropout",
    "embedding_params",
    "fc_layers",
    "fc_stack_params",
    "initializer",
    "norm",
    "positive_int",
    "reduce_output",
]

INITIALIZERS = (
    "uniform",
    "normal",
    "constant",
    "ones",
    "zeros",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
    "identity",
)
ACTIVATIONS = ("elu", "leakyRelu", "logSigmoid", "relu", "sigmoid", "tanh", "softmax", "gelu")
NORMS = ("batch", "layer", "ghost")
REDUCERS = ("sum", "mean", "avg", "max", "concat", "last", "attention", "none")


def dropout(default: float = 0.0) -> Param:
    """A dropout probability in [0, 1]."""
    return Param(default, "float", ge=0.0, le=1.0)


def activation(default: str | None = "relu") -> Param:
    return Param(default, "null", choices=ACTIVATIONS)


class _Initializer(Param):
    """An initializer name, or ``{type: <name>, ...its parameters}`` (Ludwig's dict form)."""

    def check(self, value: Any, path: KeyPath, ctx: Ctx) -> Any:
        if isinstance(value, Mapping):
            out = dict(value)
            if "type" not in out:
                ctx.problem(
                    path, "an initializer mapping needs 'type'", hint=allowed_hint(INITIALIZERS)
                )
                return out
            out["type"] = super().check(out["type"], (*path, "type"), ctx)
            return out
        return super().check(value, path, ctx)


def initializer(default: str = "xavier_uniform") -> Param:
    return _Initializer(default, choices=INITIALIZERS)


def norm() -> Param:
    return Param(None, "null", choices=NORMS)


def positive_int(default: int | None, *, nullable: bool = False) -> Param:
    return Param(default, "int", *(("null",) if nullable else ()), ge=1)


def reduce_output(default: str | None = "sum") -> Param:
    return Param(default, "null", choices=REDUCERS)


def fc_layers() -> ListOf:
    """A list of per-layer overrides (``output_size``, ``dropout``, ...), or null; each layer
    keeps only what was written (the stack's own parameters fill the rest)."""
    layer = Section(
        {
            "output_size": positive_int(256),
            "use_bias": Param(True, "bool"),
            "weights_initializer": initializer("xavier_uniform"),
            "bias_initializer": initializer("zeros"),
            "norm": norm(),
            "norm_params": FreeDict(),
            "activation": activation(),
            "dropout": dropout(),
            "residual": Param(False, "bool"),
        },
        fill=False,
    )
    return ListOf(layer, None)


def fc_stack_params(
    *,
    num_fc_layers: int | None = 0,
    output_size: int = 256,
    dropout_default: float = 0.0,
    activation_default: str = "relu",
) -> dict[str, Spec]:
    """The fully connected stack most encoders and combiners end with."""
    return {
        "dropout": dropout(dropout_default),
        "activation": activation(activation_default),
        "use_bias": Param(True, "bool"),
        "bias_initializer": initializer("zeros"),
        "weights_initializer": initializer("xavier_uniform"),
        "norm": norm(),
        "norm_params": FreeDict(),
        "num_fc_layers": Param(
            num_fc_layers, "int", *(() if num_fc_layers is not None else ("null",)), ge=0
        ),
        "output_size": positive_int(output_size),
        "fc_layers": fc_layers(),
    }


def embedding_params(size: int = 50) -> dict[str, Spec]:
    """Embedding table options (``vocab`` is filled in by preprocessing)."""
    return {
        "vocab": ListOf(Param(None, "str", "int", "float", "bool", "null"), None),
        "embedding_size": positive_int(size),
        "embeddings_on_cpu": Param(False, "bool"),
        "embeddings_trainable": Param(True, "bool"),
        "pretrained_embeddings": Param(None, "str", "null"),
        "representation": Param("dense", choices=("dense", "sparse")),
    }
