"""Output feature decoders and losses per feature type (Ludwig 0.11 names and defaults)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ludwig_nb.config.schema.common import (
    activation,
    dropout,
    fc_layers,
    initializer,
    norm,
    positive_int,
)
from ludwig_nb.config.schema.fields import Ctx, FreeDict, ListOf, Param, Section, Spec
from ludwig_nb.config.schema.variants import Loose, Variants
from ludwig_nb.config.yaml_positions import KeyPath

__all__ = ["DECODERS", "LOSSES"]

_FC: dict[str, Spec] = {
    "fc_layers": fc_layers(),
    "num_fc_layers": Param(0, "int", ge=0),
    "fc_output_size": positive_int(256),
    "fc_use_bias": Param(True, "bool"),
    "fc_weights_initializer": initializer("xavier_uniform"),
    "fc_bias_initializer": initializer("zeros"),
    "fc_norm": norm(),
    "fc_norm_params": FreeDict(),
    "fc_activation": activation(),
    "fc_dropout": dropout(),
}
_HEAD: dict[str, Spec] = {
    "input_size": positive_int(None, nullable=True),
    "use_bias": Param(True, "bool"),
    "weights_initializer": initializer("xavier_uniform"),
    "bias_initializer": initializer("zeros"),
}

_REGRESSOR = Section({**_FC, **_HEAD})
_CLASSIFIER = Section({**_FC, **_HEAD, "num_classes": positive_int(None, nullable=True)})
_PROJECTOR = Section(
    {
        **_FC,
        **_HEAD,
        "output_size": positive_int(None, nullable=True),
        "activation": activation(None),
        "multiplier": Param(1.0, "float"),
        "clip": ListOf(Param(None, "float"), None, length=2),
    }
)

#: output feature type -> its decoder schema
DECODERS: dict[str, Variants] = {
    "binary": Variants({"regressor": _REGRESSOR}, "regressor", what="binary decoder"),
    "number": Variants({"regressor": _REGRESSOR}, "regressor", what="number decoder"),
    "category": Variants({"classifier": _CLASSIFIER}, "classifier", what="category decoder"),
    "category_distribution": Variants(
        {"classifier": _CLASSIFIER}, "classifier", what="category_distribution decoder"
    ),
    "set": Variants({"classifier": _CLASSIFIER}, "classifier", what="set decoder"),
    "vector": Variants({"projector": _PROJECTOR}, "projector", what="vector decoder"),
    "timeseries": Variants({"projector": Loose()}, "projector", what="timeseries decoder"),
    "sequence": Variants(
        {"generator": Loose(), "tagger": Loose()}, "generator", what="sequence decoder"
    ),
    "text": Variants({"generator": Loose(), "tagger": Loose()}, "generator", what="text decoder"),
    "image": Variants({"unet": Loose()}, "unet", what="image decoder"),
}


class _ClassWeights(Spec):
    """null, a list of non-negative weights (one per class), or ``{class: weight}``."""

    def default(self) -> Any:
        return None

    def describe(self) -> str:
        return "null, a list of weights or a mapping class -> weight"

    def check(self, value: Any, path: KeyPath, ctx: Ctx) -> Any:
        if value is None:
            return None
        weight = Param(1.0, "float", ge=0.0)
        if isinstance(value, list):
            return [weight.check(v, (*path, i), ctx) for i, v in enumerate(value)]
        if isinstance(value, Mapping):
            return {k: weight.check(v, (*path, k), ctx) for k, v in value.items()}
        ctx.problem(path, f"must be {self.describe()}")
        return value


def _weight() -> dict[str, Spec]:
    return {"weight": Param(1.0, "float", ge=0.0)}


_REGRESSION = Section(_weight())
_BWCE = Section(
    {
        **_weight(),
        "positive_class_weight": Param(None, "float", "null", ge=0.0),
        "robust_lambda": Param(0, "float", ge=0.0, le=1.0),
        "confidence_penalty": Param(0, "float", ge=0.0),
    }
)
_SOFTMAX = Section(
    {
        **_weight(),
        "class_weights": _ClassWeights(),
        "robust_lambda": Param(0, "float", ge=0.0, le=1.0),
        "confidence_penalty": Param(0, "float", ge=0.0),
        "class_similarities": ListOf(ListOf(Param(0, "float"), nullable=False), None),
        "class_similarities_temperature": Param(0, "float", ge=0.0),
    }
)
_SIGMOID = Section({**_weight(), "class_weights": _ClassWeights()})
_HUBER = Section({**_weight(), "delta": Param(1.0, "float", gt=0.0)})

_NUMBER_LOSSES: dict[str, Spec] = {
    "mean_squared_error": _REGRESSION,
    "mean_absolute_error": _REGRESSION,
    "root_mean_squared_error": _REGRESSION,
    "root_mean_squared_percentage_error": _REGRESSION,
    "mean_absolute_percentage_error": _REGRESSION,
    "huber": _HUBER,
}

#: output feature type -> its loss schema
LOSSES: dict[str, Variants] = {
    "binary": Variants(
        {"binary_weighted_cross_entropy": _BWCE},
        "binary_weighted_cross_entropy",
        what="binary loss",
    ),
    "number": Variants(_NUMBER_LOSSES, "mean_squared_error", what="number loss"),
    "category": Variants(
        {"softmax_cross_entropy": _SOFTMAX, "corn": Loose()},
        "softmax_cross_entropy",
        what="category loss",
    ),
    "category_distribution": Variants(
        {"softmax_cross_entropy": _SOFTMAX}, "softmax_cross_entropy", what="category loss"
    ),
    "set": Variants({"sigmoid_cross_entropy": _SIGMOID}, "sigmoid_cross_entropy", what="set loss"),
    "vector": Variants(
        {
            "mean_squared_error": _REGRESSION,
            "mean_absolute_error": _REGRESSION,
            "softmax_cross_entropy": _SOFTMAX,
            "huber": _HUBER,
        },
        "mean_squared_error",
        what="vector loss",
    ),
    "timeseries": Variants({**_NUMBER_LOSSES}, "huber", what="timeseries loss"),
    "sequence": Variants(
        {"sequence_softmax_cross_entropy": Loose(), "next_token_softmax_cross_entropy": Loose()},
        "sequence_softmax_cross_entropy",
        what="sequence loss",
    ),
    "text": Variants(
        {"sequence_softmax_cross_entropy": Loose(), "next_token_softmax_cross_entropy": Loose()},
        "sequence_softmax_cross_entropy",
        what="text loss",
    ),
    "image": Variants(
        {"softmax_cross_entropy": _SOFTMAX}, "softmax_cross_entropy", what="image loss"
    ),
}
