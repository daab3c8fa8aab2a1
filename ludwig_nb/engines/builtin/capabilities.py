"""Which valid Ludwig configs the built-in engine can run (its half of the engine contract).

The built-in engine runs a subset of Ludwig's ECD. Everything else that Ludwig accepts is
reported by name as ``UnsupportedByEngine``, located at the config's line, pointing at the
engine that runs it (``engine: ludwig``), so that nothing is ever silently ignored. The
feature types are the data layer's (what its preprocessing handles); the rest are this
engine's model parts. Widen the tables only together with the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ludwig_nb.config.errors import ConfigError, UnsupportedByEngine
from ludwig_nb.config.schema.fields import Ctx
from ludwig_nb.config.yaml_positions import KeyPath, format_path
from ludwig_nb.engines.builtin.image.capabilities import (
    OWN_IMAGE_ENCODERS,
    TORCHVISION_FAMILIES,
    check_image_input,
)
from ludwig_nb.engines.builtin.optimizer_support import (
    BITSANDBYTES_OPTIMIZERS,
    TORCH_OPTIMIZERS,
    check_optimizer,
)
from ludwig_nb.engines.builtin.preprocessing.feature_types import INPUT_TYPES, OUTPUT_TYPES

if TYPE_CHECKING:
    from ludwig_nb.config import Config

__all__ = [
    "BUILTIN_COMBINERS",
    "BUILTIN_ENCODERS",
    "BUILTIN_INPUT_TYPES",
    "BUILTIN_LOSSES",
    "BUILTIN_OPTIMIZERS",
    "BUILTIN_OUTPUT_TYPES",
    "BUILTIN_RNN_CELLS",
    "BUILTIN_SPLITS",
    "BUILTIN_TOKENIZERS",
    "LUDWIG_HINT",
    "check_builtin",
    "check_engine_support",
]

LUDWIG_HINT = 'engine: ludwig runs this config unchanged (`pip install "ludwig_nb[ludwig]"`)'
RAY_HINT = (
    'engine: ray (the default for `backend: {type: ray}`) runs it: `pip install "ludwig_nb[ray]"`'
)

BUILTIN_INPUT_TYPES = (*INPUT_TYPES, "image")  # image inputs: engines/builtin/image/
BUILTIN_OUTPUT_TYPES = OUTPUT_TYPES
_SEQ = ("embed", "parallel_cnn", "rnn", "transformer")
BUILTIN_ENCODERS: dict[str, tuple[str, ...]] = {
    "binary": ("passthrough", "dense"),
    "number": ("passthrough", "dense"),
    "category": ("dense", "onehot"),
    "text": _SEQ,
    "sequence": _SEQ,
    "set": ("embed",),
    "bag": ("embed",),
    "vector": ("dense", "passthrough"),
    "date": ("embed",),
    # Ludwig's own, in plain torch; torchvision's families when torchvision loads (image_checks)
    "image": (*OWN_IMAGE_ENCODERS, *TORCHVISION_FAMILIES),
}
BUILTIN_LOSSES: dict[str, tuple[str, ...]] = {
    "binary": ("binary_weighted_cross_entropy",),
    "category": ("softmax_cross_entropy",),
    "number": ("mean_squared_error", "mean_absolute_error", "root_mean_squared_error", "huber"),
    "set": ("sigmoid_cross_entropy",),
    "vector": ("mean_squared_error", "mean_absolute_error", "huber"),
}
BUILTIN_COMBINERS = ("concat", "transformer", "tabtransformer")
#: torch.optim's always; bitsandbytes' when bitsandbytes >= 0.50 is installed
BUILTIN_OPTIMIZERS = TORCH_OPTIMIZERS + BITSANDBYTES_OPTIMIZERS
BUILTIN_SPLITS = ("random", "fixed", "stratify")
BUILTIN_TOKENIZERS = ("space", "space_punct", "characters", "comma", "underscore")
BUILTIN_RNN_CELLS = ("rnn", "lstm", "gru")

# Ludwig options whose non-default value the built-in engine would otherwise ignore:
# (path inside the section, "is it in use?", what to call it)
_Probe = tuple[tuple[str, ...], Callable[[Any], bool], str]


def _set(value: Any) -> bool:
    return value is not None


_TRAINER_PROBES: tuple[_Probe, ...] = (
    (("increase_batch_size_on_plateau",), bool, "increasing the batch size on plateau"),
    (("enable_profiling",), bool, "the torch profiler"),
    (("bucketing_field",), _set, "bucketing"),
    (("layers_to_freeze_regex",), _set, "freezing layers"),
    (("enable_gradient_checkpointing",), bool, "gradient checkpointing"),
    (("eval_steps",), _set, "limiting evaluation steps"),
)
_PREPROCESSING_PROBES: tuple[_Probe, ...] = (
    (("oversample_minority",), _set, "oversampling"),
    (("undersample_majority",), _set, "undersampling"),
)
_COMBINER_PROBES: tuple[_Probe, ...] = ()
_INPUT_PROBES: tuple[_Probe, ...] = (
    (("encoder", "pretrained_embeddings"), _set, "pretrained embeddings"),
    (("encoder", "should_embed"), lambda v: v is False, "should_embed: false"),
    (("encoder", "representation"), lambda v: v == "sparse", "sparse embeddings"),
    (("encoder", "pool_function"), lambda v: v not in (None, "max"), "pooling other than max"),
    (("preprocessing", "outlier_strategy"), _set, "outlier handling"),
    (("preprocessing", "vocab_file"), _set, "an external vocabulary"),
    (("preprocessing", "pretrained_model_name_or_path"), _set, "a pretrained tokenizer"),
)
_OUTPUT_PROBES: tuple[_Probe, ...] = (
    (("dependencies",), bool, "output feature dependencies"),
    (("calibration",), bool, "calibration"),
    (("clip",), _set, "clipping predictions"),
    (("loss", "class_similarities"), _set, "class_similarities"),
    (("loss", "robust_lambda"), bool, "robust_lambda"),
    (("loss", "confidence_penalty"), bool, "confidence_penalty"),
    (("preprocessing", "outlier_strategy"), _set, "outlier handling"),
)


def check_builtin(config: Config) -> None:
    """Reject what the built-in engine cannot run of a valid ``config``.

    Raise ``UnsupportedByEngine`` (every problem, located at the config's lines) for what the
    built-in engine cannot run of the valid ``config``.
    """
    ctx = Ctx(config.positions)
    cfg = config.to_dict()
    if cfg.get("model_type") == "llm":
        from ludwig_nb.engines.builtin.llm.support import require_llm_extra

        require_llm_extra()
    check_engine_support(cfg, ctx)
    if ctx.problems:
        ordered = sorted(ctx.problems, key=lambda p: (p.line is None, p.line or 0, p.column or 0))
        raise ConfigError.collect(ordered)


def check_engine_support(cfg: dict[str, Any], ctx: Ctx) -> None:
    """Report what the built-in engine cannot run of ``cfg`` as problems in ``ctx``.

    Report, as ``UnsupportedByEngine`` problems in ``ctx``, what the built-in engine cannot run of
    ``cfg`` (a rendered config without schema problems).
    """
    report = _Reporter(ctx)
    if cfg.get("model_type") == "llm":
        from ludwig_nb.engines.builtin.llm.support import check_llm

        check_llm(cfg, report)
        _whole_run(cfg, report)
        return
    if cfg.get("model_type") != "ecd":
        report(
            ("model_type",),
            f"model_type '{cfg.get('model_type')}' is not run by the built-in engine",
        )
        return
    for i, feature in enumerate(cfg["input_features"]):
        _input_feature(feature, ("input_features", i), report)
    for i, feature in enumerate(cfg["output_features"]):
        _output_feature(feature, ("output_features", i), report)
    _probe(cfg["combiner"], ("combiner",), _COMBINER_PROBES, report)
    combiner = cfg["combiner"]["type"]
    if combiner not in BUILTIN_COMBINERS:
        report(
            ("combiner", "type"),
            f"the {combiner} combiner is not run by the built-in engine",
            also=BUILTIN_COMBINERS,
        )
    _trainer(cfg["trainer"], report)
    _preprocessing(cfg["preprocessing"], report)
    _whole_run(cfg, report)


def _whole_run(cfg: dict[str, Any], report: _Reporter) -> None:
    """What no model type of the built-in engine runs: a search, another backend."""
    if cfg.get("hyperopt") is not None:
        report(
            ("hyperopt",),
            "a config with a hyperopt section is a search, not one training run",
            engine_hint="search it with %%ludwig_hyperopt, ludwig_nb.hyperopt(config, dataset) "
            "or `ludwig-nb hyperopt`; train() trains one config without hyperopt",
        )
    backend = cfg.get("backend") or {}
    if backend.get("type") not in (None, "local"):
        report(
            ("backend", "type"),
            f"backend '{backend.get('type')}' is not run by the built-in engine",
            engine_hint=RAY_HINT,
            engine="ray",
        )


class _Reporter:
    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx

    def __call__(
        self,
        path: KeyPath,
        message: str,
        *,
        also: tuple[str, ...] = (),
        engine_hint: str = LUDWIG_HINT,
        engine: str = "ludwig",
        unsupported: bool = True,
    ) -> None:
        """Report a problem at ``path``; ``unsupported=False``: an error no engine runs past."""
        runs = f"; the built-in engine runs: {', '.join(also)}" if also else ""
        if not unsupported:
            self.ctx.problem(path, message, hint=engine_hint + runs)
            return
        self.ctx.problem(
            path, message, hint=engine_hint + runs, kind=UnsupportedByEngine, engine=engine
        )


def _name(feature: dict[str, Any]) -> str:
    return f"'{feature.get('name')}'"


def _input_feature(feature: dict[str, Any], path: KeyPath, report: _Reporter) -> None:
    ftype = feature.get("type")
    if ftype not in BUILTIN_INPUT_TYPES:
        report(
            (*path, "type"),
            f"input feature {_name(feature)}: {ftype} features are not run by the built-in engine",
            also=BUILTIN_INPUT_TYPES,
        )
        return
    encoder = feature["encoder"]
    if encoder["type"] not in BUILTIN_ENCODERS[ftype]:
        report(
            (*path, "encoder", "type"),
            f"input feature {_name(feature)}: the "
            f"{encoder['type']} {ftype} encoder is not run by the built-in engine",
            also=BUILTIN_ENCODERS[ftype],
        )
    if encoder["type"] == "rnn" and encoder.get("cell_type") not in BUILTIN_RNN_CELLS:
        report(
            (*path, "encoder", "cell_type"),
            f"input feature {_name(feature)}: rnn "
            f"cell_type '{encoder.get('cell_type')}' is not run by the built-in engine",
            also=BUILTIN_RNN_CELLS,
        )
    _tokenizer(feature, path, report)
    _probe(feature, path, _INPUT_PROBES, report, f"input feature {_name(feature)}: ")
    if ftype == "image":
        check_image_input(feature, path, report)


def _output_feature(feature: dict[str, Any], path: KeyPath, report: _Reporter) -> None:
    ftype = feature.get("type")
    if ftype not in BUILTIN_OUTPUT_TYPES:
        report(
            (*path, "type"),
            f"output feature {_name(feature)}: {ftype} outputs are not run by the built-in engine",
            also=BUILTIN_OUTPUT_TYPES,
        )
        return
    loss = feature["loss"]
    if loss["type"] not in BUILTIN_LOSSES[ftype]:
        report(
            (*path, "loss", "type"),
            f"output feature {_name(feature)}: the "
            f"{loss['type']} loss is not run by the built-in engine",
            also=BUILTIN_LOSSES[ftype],
        )
    _tokenizer(feature, path, report)
    _probe(feature, path, _OUTPUT_PROBES, report, f"output feature {_name(feature)}: ")


def _tokenizer(feature: dict[str, Any], path: KeyPath, report: _Reporter) -> None:
    tokenizer = (feature.get("preprocessing") or {}).get("tokenizer")
    if tokenizer is not None and tokenizer not in BUILTIN_TOKENIZERS:
        report(
            (*path, "preprocessing", "tokenizer"),
            f"feature {_name(feature)}: tokenizer '{tokenizer}' is not run by the built-in engine",
            also=BUILTIN_TOKENIZERS,
        )


def _trainer(trainer: dict[str, Any], report: _Reporter) -> None:
    check_optimizer(trainer["optimizer"], report)
    _probe(trainer, ("trainer",), _TRAINER_PROBES, report)


def _preprocessing(pre: dict[str, Any], report: _Reporter) -> None:
    split = pre["split"]["type"]
    if split not in BUILTIN_SPLITS:
        report(
            ("preprocessing", "split", "type"),
            f"the {split} split is not done by the built-in engine",
            also=BUILTIN_SPLITS,
        )
    _probe(pre, ("preprocessing",), _PREPROCESSING_PROBES, report)


def _probe(
    section: dict[str, Any],
    base: KeyPath,
    probes: tuple[_Probe, ...],
    report: _Reporter,
    prefix: str = "",
) -> None:
    for keys, in_use, what in probes:
        value: Any = section
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if in_use(value):
            where = format_path((*base, *keys))
            report((*base, *keys), f"{prefix}{what} ({where}) is not done by the built-in engine")
