"""Old config syntax that Ludwig 0.11 upgrades silently, upgraded the same way, with a note.

Ludwig applies its upgrades (``ludwig/utils/backward_compatibility.py``) to every config that
has no ``ludwig_version``, or an older one than the upgrade's: ``training:`` -> ``trainer:``,
encoder / decoder parameters written on the feature -> nested under ``encoder:`` / ``decoder:``,
old split and scheduler keys, per-type preprocessing -> ``defaults``, ... Each upgrade here
does what Ludwig's does and records a ``ConfigWarning`` saying what to write instead; the
positions of moved keys move with them, so later problems are still located.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from ludwig_nb.config.schema.features import FEATURE_TYPES
from ludwig_nb.config.schema.fields import Ctx, suggest
from ludwig_nb.config.schema.ludwig_json import JObject, ludwig_spec
from ludwig_nb.config.yaml_positions import KeyPath, format_path

__all__ = ["upgrade"]

_SEQUENCE_TYPES = ("sequence", "text", "audio", "timeseries")
_LEVEL_RENAMES = {  # Ludwig 0.4
    "sequence_length_limit": "max_sequence_length",
    "word_most_common": "most_common",
    "word_sequence_length_limit": "max_sequence_length",
    "word_tokenizer": "tokenizer",
    "word_vocab_file": "vocab_file",
    "char_most_common": "most_common",
    "char_sequence_length_limit": "max_sequence_length",
    "char_tokenizer": "tokenizer",
    "char_vocab_file": "vocab_file",
}
_BIAS_RENAMES = {
    "bias": "use_bias",
    "conv_bias": "conv_use_bias",
    "default_bias": "default_use_bias",
}
_FC_KEYS = (
    "fc_layers",
    "output_size",
    "use_bias",
    "weights_initializer",
    "bias_initializer",
    "norm",
    "norm_params",
    "activation",
    "dropout",
)
_SCHEDULER_KEYS = {  # Ludwig 0.7: trainer.<old> -> trainer.learning_rate_scheduler.<new>
    "reduce_learning_rate_on_plateau": "reduce_on_plateau",
    "reduce_learning_rate_on_plateau_patience": "reduce_on_plateau_patience",
    "reduce_learning_rate_on_plateau_rate": "reduce_on_plateau_rate",
    "reduce_learning_rate_eval_metric": "reduce_eval_metric",
    "reduce_learning_rate_eval_split": "reduce_eval_split",
    "decay": "decay",
    "decay_steps": "decay_steps",
    "decay_rate": "decay_rate",
    "staircase": "staircase",
    "learning_rate_warmup_epochs": "warmup_evaluations",
}
#: every feature type Ludwig knows (``get_base_type_registry``): the ones a config may name,
#: and the distribution type Ludwig registers for its own outputs
_FEATURE_TYPES = (*FEATURE_TYPES, "category_distribution")


def _version(text: object) -> tuple[int, ...]:
    parts = []
    for piece in str(text).split(".")[:3]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


class _Upgrader:
    def __init__(self, config: dict[str, object], ctx: Ctx) -> None:
        self.config = config
        self.ctx = ctx
        self.since = _version(config.get("ludwig_version", "0.0"))

    def due(self, version: str) -> bool:
        """Whether an upgrade first needed in ``version`` applies to this config."""
        return self.since < _version(version)

    def note(self, path: KeyPath, message: str, hint: str | None = None) -> None:
        self.ctx.note(path, f"old syntax upgraded: {message}", hint=hint)

    def move(self, old: KeyPath, new: KeyPath) -> None:
        """Positions of ``old`` (and below it) now also answer for ``new``."""
        positions = self.ctx.positions
        if positions is None:
            return
        for table in (positions.keys, positions.values):
            for path in [p for p in table if p[: len(old)] == old]:
                table.setdefault((*new, *path[len(old) :]), table[path])

    def features(self) -> list[tuple[KeyPath, dict[str, object], bool]]:
        out: list[tuple[KeyPath, dict[str, object], bool]] = []
        for side in ("input_features", "output_features"):
            items = self.config.get(side)
            for i, feature in enumerate(items if isinstance(items, list) else []):
                if isinstance(feature, dict):
                    out.append(((side, i), feature, side == "output_features"))
        return out


def upgrade(data: Mapping[str, object], ctx: Ctx) -> dict[str, object]:
    """A copy of ``data`` with Ludwig's silent upgrades applied; each one noted in ``ctx``."""
    config = copy.deepcopy(dict(data))
    up = _Upgrader(config, ctx)
    steps: list[tuple[str, Callable[[_Upgrader], None]]] = [
        ("0.4", _level_renames),
        ("0.5", _training),
        ("0.5", _bias),
        ("0.5", _numerical),
        ("0.5", _eval_batch_size),
        ("0.5", _preprocessing_to_defaults),
        ("0.5", _split),
        ("0.6", _nest_module_params),
        ("0.6", _missing_value_strategy),
        ("0.6", _max_batch_size),
        ("0.6", _trainer_type),
        ("0.6", _class_weights),
        ("0.7", _scheduler),
        ("0.7", _empty_hyperopt),
        ("0.7", _defaults_type),
    ]
    for version, step in steps:
        if up.due(version):
            step(up)
    return config


def _dict(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _rename_in(
    params: dict[str, object], renames: Mapping[str, str], path: KeyPath, up: _Upgrader
) -> None:
    for old, new in renames.items():
        if old not in params:
            continue
        if new in params:
            up.note(
                (*path, old),
                f"'{old}' is the old name of '{new}', which is set: '{old}' is dropped",
            )
        else:
            params[new] = params[old]
            up.move((*path, old), (*path, new))
            up.note((*path, old), f"'{old}' is now '{new}'", hint=f"write '{new}'")
        del params[old]


def _level_renames(up: _Upgrader) -> None:
    pre = _dict(up.config.get("preprocessing")) or {}
    for ftype in _SEQUENCE_TYPES:
        params = _dict(pre.get(ftype))
        if params is not None:
            _rename_in(params, _LEVEL_RENAMES, ("preprocessing", ftype), up)
    for path, feature, output in up.features():
        params = _dict(feature.get("preprocessing"))
        if not output and feature.get("type") in _SEQUENCE_TYPES and params is not None:
            _rename_in(params, _LEVEL_RENAMES, (*path, "preprocessing"), up)


def _training(up: _Upgrader) -> None:
    if "training" in up.config:
        up.config["trainer"] = up.config.pop("training")
        up.move(("training",), ("trainer",))
        up.note(("training",), "the 'training' section is now 'trainer'", hint="write 'trainer:'")


def _bias(up: _Upgrader) -> None:
    def walk(node: object, path: KeyPath) -> None:
        if isinstance(node, dict):
            for key, value in list(node.items()):
                walk(value, (*path, key))
            _rename_in(node, _BIAS_RENAMES, path, up)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, (*path, i))

    for path, feature, _ in up.features():
        walk(feature, path)


def _numerical(up: _Upgrader) -> None:
    for path, feature, _ in up.features():
        if feature.get("type") == "numerical":
            feature["type"] = "number"
            up.note(
                (*path, "type"), "feature type 'numerical' is now 'number'", hint="write 'number'"
            )
        pre = _dict(feature.get("preprocessing"))
        if feature.get("type") == "audio" and pre is not None and _dict(pre.get("audio_feature")):
            pre.update(pre.pop("audio_feature"))
            up.note(
                (*path, "preprocessing", "audio_feature"),
                "audio_feature's keys now sit in preprocessing",
            )


def _eval_batch_size(up: _Upgrader) -> None:
    trainer = _dict(up.config.get("trainer"))
    if trainer is not None and trainer.get("eval_batch_size") == 0:
        trainer["eval_batch_size"] = None
        up.note(("trainer", "eval_batch_size"), "eval_batch_size 0 means null", hint="write null")


def _preprocessing_to_defaults(up: _Upgrader) -> None:
    pre = _dict(up.config.get("preprocessing"))
    if pre is None:
        return
    moved: dict[str, object] = {}
    for key in list(pre):
        ftype = "number" if key == "numerical" else key
        if ftype in _FEATURE_TYPES:
            moved[ftype] = pre.pop(key)
            up.move(("preprocessing", key), ("defaults", ftype, "preprocessing"))
            up.note(
                ("preprocessing", key),
                f"per-type preprocessing '{key}' now lives in defaults",
                hint=f"move it to defaults.{ftype}.preprocessing",
            )
    if not pre:
        up.config.pop("preprocessing")
    if not moved:
        return
    defaults = up.config.setdefault("defaults", {})
    if not isinstance(defaults, dict):
        return
    for ftype, written in moved.items():
        params = written
        if isinstance(params, dict) and "preprocessing" in params:
            params = params["preprocessing"]
        if isinstance(params, dict) and ftype == "audio" and _dict(params.get("audio_feature")):
            params.update(params.pop("audio_feature"))
        entry = defaults.setdefault(ftype, {})
        if isinstance(entry, dict):
            current = entry.get("preprocessing")
            both = isinstance(current, dict) and isinstance(params, dict)
            entry["preprocessing"] = {**current, **params} if both else params  # type: ignore[dict-item]


def _split(up: _Upgrader) -> None:
    pre = _dict(up.config.get("preprocessing"))
    if pre is None:
        return
    split: dict[str, object] = {}
    old = {k: pre.pop(k) for k in ("force_split", "split_probabilities", "stratify") if k in pre}
    if old.get("split_probabilities") is not None:
        split["probabilities"] = old["split_probabilities"]
        up.move(
            ("preprocessing", "split_probabilities"), ("preprocessing", "split", "probabilities")
        )
        up.note(
            ("preprocessing", "split_probabilities"),
            "split_probabilities is now split.probabilities",
            hint="write split: {type: random, probabilities: [...]}",
        )
    if old.get("stratify") is not None:
        split.update(type="stratify", column=old["stratify"])
        up.note(
            ("preprocessing", "stratify"),
            "stratify is now split: {type: stratify, column: ...}",
            hint="write split: {type: stratify, column: ...}",
        )
    if old.get("force_split") is not None:
        split.setdefault("type", "random")
        up.note(
            ("preprocessing", "force_split"),
            "force_split is now split.type",
            hint="write split: {type: fixed, column: split} for a fixed split",
        )
    if split:
        pre["split"] = split


def _feature_keys(feature: Mapping[str, object], output: bool) -> set[str] | None:
    side = "output_features" if output else "input_features"
    spec = ludwig_spec("ecd", side, "[]")
    ftype = feature.get("type")
    if (
        not isinstance(spec, JObject)
        or not isinstance(ftype, str)
        or ftype not in spec.variant_nodes
    ):
        return None
    return {*spec.fields_for(feature), "active", "proc_column"}


def _module_keys(feature: Mapping[str, object], part: str, output: bool) -> set[str]:
    side = "output_features" if output else "input_features"
    spec = ludwig_spec("ecd", side, "[]")
    module = spec.fields_for(feature).get(part) if isinstance(spec, JObject) else None
    if not isinstance(module, JObject):
        return set()
    written = feature.get(part)
    return set(module.fields_for(written if isinstance(written, Mapping) else {}))


def _nest_module_params(up: _Upgrader) -> None:
    for path, feature, output in up.features():
        part = "decoder" if output else "encoder"
        if isinstance(feature.get(part), str):
            feature[part] = {"type": feature[part]}
            up.note((*path, part), f"'{part}: <name>' is now '{part}: {{type: <name>}}'")
        known = _feature_keys(feature, output)
        if known is None:
            continue
        stray = [k for k in feature if k not in known]
        if not stray:
            continue
        written = feature.get(part)
        module: dict[str, object] = written if isinstance(written, dict) else {}
        nested = _module_keys(feature, part, output)
        for key in stray:
            value = feature.pop(key)
            fc = output and key in _FC_KEYS  # Ludwig < 0.6 decoders: output_size -> fc_output_size
            if key not in nested and not fc:  # Ludwig moves it too, where it does nothing: drop it
                up.ctx.note(
                    (*path, key),
                    f"'{key}' is not a feature key: Ludwig ignores it, and so does ludwig_nb",
                    hint=suggest(str(key), sorted(known)) or "remove it",
                )
                continue
            if key in nested:
                module[key] = value
                up.move((*path, key), (*path, part, key))
            if fc:
                module[f"fc_{key}"] = value
                up.move((*path, key), (*path, part, f"fc_{key}"))
            up.note(
                (*path, key),
                f"'{key}' is now a{'' if output else 'n'} {part} parameter",
                hint=f"move it under '{part}:'",
            )
        feature[part] = module


def _missing_value_strategy(up: _Upgrader) -> None:
    holders = [((*p, "preprocessing"), f.get("preprocessing")) for p, f, _ in up.features()]
    defaults = _dict(up.config.get("defaults")) or {}
    holders += [
        (("defaults", t, "preprocessing"), _dict(v) and v.get("preprocessing"))
        for t, v in defaults.items()
    ]
    for path, pre in holders:
        if isinstance(pre, dict) and pre.get("missing_value_strategy") in ("backfill", "pad"):
            new = "bfill" if pre["missing_value_strategy"] == "backfill" else "ffill"
            up.note(
                (*path, "missing_value_strategy"),
                f"missing_value_strategy '{pre['missing_value_strategy']}' is now '{new}'",
                hint=f"write '{new}'",
            )
            pre["missing_value_strategy"] = new


def _max_batch_size(up: _Upgrader) -> None:
    trainer = _dict(up.config.get("trainer"))
    if trainer is not None:
        _rename_in(
            trainer, {"increase_batch_size_on_plateau_max": "max_batch_size"}, ("trainer",), up
        )


def _trainer_type(up: _Upgrader) -> None:
    trainer = _dict(up.config.get("trainer"))
    if up.config.get("model_type") != "llm" and trainer is not None and "type" in trainer:
        del trainer["type"]
        up.note(
            ("trainer", "type"),
            "trainer.type is gone: model_type picks the trainer",
            hint="remove it",
        )


def _class_weights(up: _Upgrader) -> None:
    for _path, feature, output in up.features():
        loss = _dict(feature.get("loss"))
        weights = (loss or {}).get("class_weights")
        if (
            output
            and loss is not None
            and "class_weights" in loss
            and not isinstance(weights, list | dict)
        ):
            loss["class_weights"] = None


def _scheduler(up: _Upgrader) -> None:
    trainer = _dict(up.config.get("trainer"))
    if trainer is None:
        return
    scheduler = trainer.get("learning_rate_scheduler")
    scheduler = scheduler if isinstance(scheduler, dict) else {}
    for old, new in _SCHEDULER_KEYS.items():
        if old not in trainer:
            continue
        value = trainer.pop(old)
        where = format_path(("trainer", "learning_rate_scheduler", new))
        up.note(("trainer", old), f"trainer.{old} is now {where}", hint=f"move it to {where}")
        if new in scheduler:
            continue
        if old == "decay" and isinstance(value, bool):
            value = "exponential" if value else None
        elif old == "reduce_learning_rate_on_plateau" and isinstance(value, int | float):
            value = int(value)
        scheduler[new] = value
        up.move(("trainer", old), ("trainer", "learning_rate_scheduler", new))
    if scheduler:
        trainer["learning_rate_scheduler"] = scheduler


def _empty_hyperopt(up: _Upgrader) -> None:
    if up.config.get("hyperopt") == {}:
        del up.config["hyperopt"]
        up.note(("hyperopt",), "'hyperopt: {}' means no hyperopt", hint="write 'hyperopt: null'")


def _defaults_type(up: _Upgrader) -> None:
    defaults = _dict(up.config.get("defaults")) or {}
    for ftype, entry in defaults.items():
        if isinstance(entry, dict) and "type" in entry:
            del entry["type"]
            up.note(
                ("defaults", ftype, "type"), "a 'type' in defaults does nothing", hint="remove it"
            )
