"""The ``combiner`` section (Ludwig 0.11 names and defaults; LUDWIG_FACTS.md §7)."""

from __future__ import annotations

from ludwig_nb.config.schema.common import (
    activation,
    dropout,
    fc_layers,
    fc_stack_params,
    initializer,
    norm,
    positive_int,
    reduce_output,
)
from ludwig_nb.config.schema.fields import FreeDict, Param, Section
from ludwig_nb.config.schema.variants import Loose, Variants

__all__ = ["COMBINERS", "combiner_section"]

_CONCAT = Section(
    {
        **fc_stack_params(num_fc_layers=0, output_size=256),
        "flatten_inputs": Param(False, "bool"),
        "residual": Param(False, "bool"),
    }
)

_TRANSFORMER = Section(
    {
        "dropout": dropout(0.1),
        "transformer_output_size": positive_int(256),
        "hidden_size": positive_int(256),
        "num_layers": positive_int(1),
        "num_heads": positive_int(8),
        "use_bias": Param(True, "bool"),
        "bias_initializer": initializer("zeros"),
        "weights_initializer": initializer("xavier_uniform"),
        "fc_layers": fc_layers(),
        "num_fc_layers": Param(0, "int", ge=0),
        "output_size": positive_int(256),
        "fc_activation": activation(),
        "fc_dropout": dropout(),
        "fc_residual": Param(False, "bool"),
        "norm": norm(),
        "norm_params": FreeDict(),
        "reduce_output": reduce_output("mean"),
    }
)

_TABTRANSFORMER = _TRANSFORMER.extended(
    embed_input_feature_name=Param(None, "int", "null", literals=("add",), ge=1),
    reduce_output=reduce_output("concat"),
)

#: combiner type -> schema; the ones the built-in engine does not run are kept as written
COMBINERS = {
    "concat": _CONCAT,
    "transformer": _TRANSFORMER,
    "tabtransformer": _TABTRANSFORMER,
    "tabnet": Loose(),
    "comparator": Loose(),
    "project_aggregate": Loose(),
    "sequence": Loose(),
    "sequence_concat": Loose(),
}


def combiner_section() -> Variants:
    return Variants(COMBINERS, "concat", what="combiner")
