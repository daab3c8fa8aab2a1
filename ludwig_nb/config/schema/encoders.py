"""Input feature encoders per feature type, with Ludwig 0.11's names and defaults.

Encoders the built-in engine runs are modelled key by key. Other valid Ludwig encoders
(Hugging Face text encoders, image/audio/h3/timeseries encoders, stacked CNNs, ...) are
``Loose``: accepted as written so that the engine check can name them, never dropped.
"""

from __future__ import annotations

from ludwig_nb.config.schema.common import (
    INITIALIZERS,
    REDUCERS,
    activation,
    dropout,
    embedding_params,
    fc_layers,
    fc_stack_params,
    initializer,
    norm,
    positive_int,
    reduce_output,
)
from ludwig_nb.config.schema.fields import FreeDict, ListOf, Param, Section, Spec
from ludwig_nb.config.schema.variants import Loose, Variants

__all__ = ["ENCODERS", "RNN_CELL_TYPES", "encoder_spec"]

RNN_CELL_TYPES = ("rnn", "lstm", "lstm_block", "lstm_cudnn", "ln", "gru", "gru_block", "gru_cudnn")

_PASSTHROUGH = Section({})
# Ludwig's category embedding initializers (a wider, Keras-style list than INITIALIZERS)
_EMBEDDING_INITIALIZERS = tuple(
    dict.fromkeys(
        (
            *INITIALIZERS,
            "truncated_normal",
            "variance_scaling",
            "glorot_normal",
            "glorot_uniform",
            "he_normal",
            "he_uniform",
            "lecun_normal",
            "lecun_uniform",
        )
    )
)

_DENSE = Section(
    {
        "dropout": dropout(),
        "activation": activation(),
        "input_size": positive_int(None, nullable=True),
        "output_size": positive_int(256),
        "use_bias": Param(True, "bool"),
        "bias_initializer": initializer("zeros"),
        "weights_initializer": initializer("xavier_uniform"),
        "norm": norm(),
        "norm_params": FreeDict(),
        "num_layers": Param(1, "int", ge=0),
        "fc_layers": fc_layers(),
    }
)

_CATEGORY_EMBED = {
    "dropout": dropout(),
    "vocab": ListOf(Param(None, "str", "int", "float", "bool", "null"), None),
    "embedding_initializer": Param(None, "null", choices=_EMBEDDING_INITIALIZERS),
    "embeddings_on_cpu": Param(False, "bool"),
    "pretrained_embeddings": Param(None, "str", "null"),
    "embeddings_trainable": Param(True, "bool"),
}

_CATEGORY_DENSE = Section({**_CATEGORY_EMBED, "embedding_size": positive_int(50)})
_CATEGORY_SPARSE = Section(_CATEGORY_EMBED)
_CATEGORY_ONEHOT = Section({"vocab": _CATEGORY_EMBED["vocab"]})

_SET_EMBED = Section(
    {
        **embedding_params(50),
        **fc_stack_params(num_fc_layers=0, output_size=10),
    }
)
_BAG_EMBED = _SET_EMBED.extended(force_embedding_size=Param(False, "bool"))

_DATE_FIELDS: dict[str, Spec] = fc_stack_params(num_fc_layers=0, output_size=10)
_DATE_EMBED = Section(
    {
        **_DATE_FIELDS,
        "embedding_size": positive_int(10),
        "embeddings_on_cpu": Param(False, "bool"),
    }
)
_DATE_WAVE = Section(_DATE_FIELDS)


def _sequence_base(weights: str = "xavier_uniform") -> dict[str, Spec]:
    return {
        "dropout": dropout(),
        "max_sequence_length": positive_int(None, nullable=True),
        "use_bias": Param(True, "bool"),
        "bias_initializer": initializer("zeros"),
        "weights_initializer": initializer(weights),
        "should_embed": Param(True, "bool"),
        **embedding_params(256),
    }


_SEQ_EMBED = Section(
    {
        "dropout": dropout(),
        "max_sequence_length": positive_int(None, nullable=True),
        "weights_initializer": initializer("uniform"),
        "reduce_output": reduce_output("sum"),
        **embedding_params(256),
    }
)

_PARALLEL_CNN = Section(
    {
        **_sequence_base(),
        "activation": activation(),
        "reduce_output": reduce_output("sum"),
        "num_conv_layers": positive_int(None, nullable=True),
        "conv_layers": ListOf(FreeDict(nullable=False), None),
        "num_filters": positive_int(256),
        "filter_size": positive_int(3),
        "pool_function": Param("max", choices=REDUCERS),
        "pool_size": positive_int(None, nullable=True),
        "output_size": positive_int(256),
        "norm": norm(),
        "norm_params": FreeDict(),
        "num_fc_layers": Param(None, "int", "null", ge=0),
        "fc_layers": fc_layers(),
    }
)

_RNN = Section(
    {
        **_sequence_base(),
        "recurrent_dropout": dropout(),
        "activation": activation("tanh"),
        "recurrent_activation": activation("sigmoid"),
        "num_layers": positive_int(1),
        "state_size": positive_int(256),
        "cell_type": Param("rnn", choices=RNN_CELL_TYPES),
        "bidirectional": Param(False, "bool"),
        "unit_forget_bias": Param(True, "bool"),
        "recurrent_initializer": initializer("orthogonal"),
        "reduce_output": reduce_output("last"),
        "output_size": positive_int(256),
        "norm": norm(),
        "norm_params": FreeDict(),
        "num_fc_layers": Param(0, "int", ge=0),
        "fc_activation": activation(),
        "fc_dropout": dropout(),
        "fc_layers": fc_layers(),
    }
)

_TRANSFORMER = Section(
    {
        **_sequence_base(),
        "dropout": dropout(0.1),
        "reduce_output": reduce_output("last"),
        "num_layers": positive_int(1),
        "hidden_size": positive_int(256),
        "num_heads": positive_int(8),
        "transformer_output_size": positive_int(256),
        "norm": norm(),
        "norm_params": FreeDict(),
        "num_fc_layers": Param(0, "int", ge=0),
        "output_size": positive_int(256),
        "fc_activation": activation(),
        "fc_dropout": dropout(),
        "fc_layers": fc_layers(),
    }
)

_SEQUENCE_EXTRA = ("stacked_cnn", "stacked_parallel_cnn", "cnnrnn", "passthrough")
_HF_TEXT = (
    "albert",
    "auto_transformer",
    "bert",
    "camembert",
    "deberta",
    "distilbert",
    "electra",
    "flaubert",
    "gpt",
    "gpt2",
    "llm",
    "longformer",
    "roberta",
    "t5",
    "tf_idf",
    "transformer_xl",
    "xlmroberta",
    "xlnet",
)


def _loose(*names: str) -> dict[str, Spec]:
    return {n: Loose() for n in names}


_SEQUENCE: dict[str, Spec] = {
    "embed": _SEQ_EMBED,
    "parallel_cnn": _PARALLEL_CNN,
    "rnn": _RNN,
    "transformer": _TRANSFORMER,
    **_loose(*_SEQUENCE_EXTRA),
}

#: feature type -> its encoder schema (``type`` picks the variant)
ENCODERS: dict[str, Variants] = {
    "binary": Variants(
        {"passthrough": _PASSTHROUGH, "dense": _DENSE}, "passthrough", what="binary encoder"
    ),
    "number": Variants(
        {"passthrough": _PASSTHROUGH, "dense": _DENSE}, "passthrough", what="number encoder"
    ),
    "category": Variants(
        {
            "dense": _CATEGORY_DENSE,
            "onehot": _CATEGORY_ONEHOT,
            "passthrough": _PASSTHROUGH,
            "sparse": _CATEGORY_SPARSE,
        },
        "dense",
        what="category encoder",
    ),
    "set": Variants({"embed": _SET_EMBED}, "embed", what="set encoder"),
    "bag": Variants({"embed": _BAG_EMBED}, "embed", what="bag encoder"),
    "date": Variants({"embed": _DATE_EMBED, "wave": _DATE_WAVE}, "embed", what="date encoder"),
    "vector": Variants(
        {"dense": _DENSE, "passthrough": _PASSTHROUGH}, "dense", what="vector encoder"
    ),
    "sequence": Variants(_SEQUENCE, "embed", what="sequence encoder"),
    "text": Variants({**_SEQUENCE, **_loose(*_HF_TEXT)}, "parallel_cnn", what="text encoder"),
    "h3": Variants(_loose("embed", "rnn", "weighted_sum"), "embed", what="h3 encoder"),
    "timeseries": Variants(
        _loose(
            "parallel_cnn",
            "cnnrnn",
            "dense",
            "passthrough",
            "rnn",
            "stacked_cnn",
            "stacked_parallel_cnn",
            "transformer",
        ),
        "parallel_cnn",
        what="timeseries encoder",
    ),
    "audio": Variants(
        _loose("parallel_cnn", "cnnrnn", "rnn", "stacked_cnn", "stacked_parallel_cnn"),
        "parallel_cnn",
        what="audio encoder",
    ),
    "image": Variants(
        _loose(
            "stacked_cnn",
            "unet",
            "mlp_mixer",
            "_resnet_legacy",
            "_vit_legacy",
            "alexnet",
            "convnext",
            "densenet",
            "efficientnet",
            "googlenet",
            "inceptionv3",
            "maxvit",
            "mnasnet",
            "mobilenetv2",
            "mobilenetv3",
            "regnet",
            "resnet",
            "resnext",
            "shufflenet_v2",
            "squeezenet",
            "swin_transformer",
            "vgg",
            "vit",
            "wide_resnet",
        ),
        "stacked_cnn",
        what="image encoder",
    ),
}


def encoder_spec(feature_type: str) -> Variants | None:
    """The encoder schema of an input ``feature_type``, or None for an unknown type."""
    return ENCODERS.get(feature_type)
