"""The parity corpus: configs judged by both Ludwig 0.11's validator and ours.

Built at test time in the Ludwig env (``scripts/setup/ludwig_env.sh``) from Ludwig's live
schema (every feature type x encoder / decoder / loss, every combiner and optimizer, and the
fully rendered dict Ludwig makes of each), plus configs written here in Ludwig's syntax (its
docs and examples), old syntax it upgrades, and invalid mutations of valid configs.

    python -m tests.config.ludwig_corpus     # in the Ludwig venv: prints the parity counts
"""

from __future__ import annotations

import copy
import functools
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

# validation must not wait on model hubs this machine cannot reach: fail fast instead
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

Case = tuple[str, str, dict[str, Any]]  # (category, id, config)

_OUT = {"name": "y", "type": "binary"}
_IN = {"name": "x", "type": "number"}


def _base(**more: Any) -> dict[str, Any]:
    return {"input_features": [dict(_IN)], "output_features": [dict(_OUT)], **more}


def _variants(node: dict[str, Any]) -> list[str]:
    return [c["if"]["properties"]["type"]["const"] for c in node.get("allOf", ())]


_VERDICTS: dict[str, tuple[bool, dict[str, Any] | None, str]] = {}


def ludwig_valid(config: dict[str, Any]) -> tuple[bool, dict[str, Any] | None, str]:
    """Ludwig's verdict: (accepted, its rendered dict, the error text); asked once per config."""
    key = json.dumps(config, sort_keys=True)
    if key not in _VERDICTS:
        _VERDICTS[key] = _ask_ludwig(config)
    ok, rendered, error = _VERDICTS[key]
    return ok, copy.deepcopy(rendered), error


def _ask_ludwig(config: dict[str, Any]) -> tuple[bool, dict[str, Any] | None, str]:
    from ludwig.schema.model_types.base import ModelConfig

    try:
        rendered = ModelConfig.from_dict(copy.deepcopy(config)).to_dict()
        return True, json.loads(json.dumps(rendered)), ""
    except Exception as err:  # any refusal of Ludwig's is its verdict
        return False, None, f"{type(err).__name__}: {err}"[:300]


def schema_cases() -> Iterator[Case]:
    """Every feature type x encoder, output type x decoder x loss, combiner, optimizer,
    split, scheduler decay, read from Ludwig's live schema."""
    from ludwig.config_validation.validation import get_schema

    props = get_schema("ecd")["properties"]
    for clause in props["input_features"]["items"]["allOf"]:
        ftype = clause["if"]["properties"]["type"]["const"]
        for encoder in clause["then"]["properties"]["encoder"]["properties"]["type"]["enum"]:
            feature = {"name": "x", "type": ftype, "encoder": {"type": encoder}}
            yield "schema", f"in-{ftype}-{encoder}", _base(input_features=[feature])
    for clause in props["output_features"]["items"]["allOf"]:
        ftype = clause["if"]["properties"]["type"]["const"]
        then = clause["then"]["properties"]
        for decoder in then["decoder"]["properties"]["type"]["enum"]:
            feature = {"name": "y", "type": ftype, "decoder": {"type": decoder}}
            yield "schema", f"out-{ftype}-{decoder}", _base(output_features=[feature])
        for loss in then["loss"]["properties"]["type"]["enum"]:
            feature = {"name": "y", "type": ftype, "loss": {"type": loss}}
            yield "schema", f"loss-{ftype}-{loss}", _base(output_features=[feature])
    for combiner in props["combiner"]["properties"]["type"]["enum"]:
        yield "schema", f"combiner-{combiner}", _base(combiner={"type": combiner})
    trainer = props["trainer"]["properties"]
    for optimizer in trainer["optimizer"]["properties"]["type"]["enum"]:
        yield "schema", f"optimizer-{optimizer}", _base(trainer={"optimizer": {"type": optimizer}})
    split = props["preprocessing"]["properties"]["split"]["properties"]["type"]["enum"]
    for kind in split:
        body = {"type": kind} if kind in ("random", "fixed") else {"type": kind, "column": "x"}
        yield "schema", f"split-{kind}", _base(preprocessing={"split": body})


def rendered_cases(valid: list[Case]) -> Iterator[Case]:
    """What Ludwig writes as model_hyperparameters.json for each valid config."""
    for _category, name, config in valid:
        ok, rendered, _ = ludwig_valid(config)
        if ok and rendered is not None:
            yield "rendered", f"rendered-{name}", json.loads(json.dumps(rendered))


def written_cases() -> Iterator[Case]:
    """Configs in Ludwig's syntax, as its docs and examples write them (our own snippets)."""
    titanic = {
        "input_features": [
            {"name": "Pclass", "type": "category"},
            {"name": "Sex", "type": "category"},
            {
                "name": "Age",
                "type": "number",
                "preprocessing": {"missing_value_strategy": "fill_with_mean"},
            },
            {"name": "Fare", "type": "number", "preprocessing": {"normalization": "zscore"}},
            {"name": "Embarked", "type": "category"},
        ],
        "output_features": [{"name": "Survived", "type": "binary"}],
        "trainer": {"epochs": 5, "learning_rate": 0.001, "batch_size": 64},
    }
    yield "written", "titanic", titanic
    yield (
        "written",
        "text-classification",
        {
            "input_features": [
                {"name": "review", "type": "text", "encoder": {"type": "parallel_cnn"}}
            ],
            "output_features": [{"name": "sentiment", "type": "category"}],
            "trainer": {"epochs": 3},
        },
    )
    yield (
        "written",
        "image-stacked-cnn",
        {
            "input_features": [
                {
                    "name": "image_path",
                    "type": "image",
                    "preprocessing": {"num_processes": 4, "height": 28, "width": 28},
                    "encoder": {
                        "type": "stacked_cnn",
                        "conv_layers": [{"num_filters": 32, "filter_size": 3}],
                    },
                }
            ],
            "output_features": [{"name": "label", "type": "category"}],
        },
    )
    yield (
        "written",
        "audio",
        {
            "input_features": [
                {
                    "name": "audio_path",
                    "type": "audio",
                    "preprocessing": {"audio_file_length_limit_in_s": 7.5, "type": "fbank"},
                    "encoder": {"type": "stacked_cnn"},
                }
            ],
            "output_features": [{"name": "speaker", "type": "category"}],
        },
    )
    yield (
        "written",
        "bert-text",
        {
            "input_features": [
                {
                    "name": "text",
                    "type": "text",
                    "encoder": {
                        "type": "bert",
                        "trainable": True,
                        "pretrained_model_name_or_path": "bert-base-uncased",
                    },
                }
            ],
            "output_features": [{"name": "label", "type": "category"}],
            "trainer": {"learning_rate": 0.00002, "batch_size": 16},
        },
    )
    yield (
        "written",
        "llm-finetune",
        {
            "model_type": "llm",
            "base_model": "facebook/opt-350m",
            "input_features": [{"name": "instruction", "type": "text"}],
            "output_features": [{"name": "output", "type": "text"}],
            "adapter": {"type": "lora"},
            "trainer": {"type": "finetune", "epochs": 1, "learning_rate": 0.0001, "batch_size": 1},
        },
    )
    yield (
        "written",
        "llm-zero-shot",
        {
            "model_type": "llm",
            "base_model": "facebook/opt-350m",
            "input_features": [{"name": "review", "type": "text"}],
            "output_features": [{"name": "label", "type": "category"}],
            "prompt": {"template": "Say positive or negative: {review}"},
            "generation": {"max_new_tokens": 8},
        },
    )
    yield "written", "tabnet", _base(combiner={"type": "tabnet", "size": 32, "output_size": 8})
    yield (
        "written",
        "defaults",
        _base(
            defaults={
                "number": {
                    "preprocessing": {"normalization": "minmax"},
                    "encoder": {"type": "dense"},
                }
            }
        ),
    )
    yield "written", "defaults-encoder-type", _base(defaults={"text": {"encoder": {"type": "rnn"}}})
    yield (
        "written",
        "multi-task",
        {
            "input_features": [{"name": "a", "type": "number"}, {"name": "t", "type": "text"}],
            "output_features": [
                {"name": "y", "type": "binary"},
                {"name": "z", "type": "number", "dependencies": ["y"]},
            ],
            "trainer": {"validation_field": "z", "validation_metric": "mean_absolute_error"},
        },
    )
    yield (
        "written",
        "scheduler",
        _base(trainer={"learning_rate_scheduler": {"decay": "cosine", "warmup_fraction": 0.1}}),
    )
    yield (
        "written",
        "hyperopt",
        _base(
            hyperopt={
                "goal": "minimize",
                "metric": "loss",
                "output_feature": "y",
                "parameters": {
                    "trainer.learning_rate": {"space": "loguniform", "lower": 0.0001, "upper": 0.1}
                },
                "executor": {"type": "ray", "num_samples": 4},
                "search_alg": {"type": "variant_generator"},
            }
        ),
    )
    yield "written", "backend-local", _base(backend={"type": "local"})
    yield (
        "written",
        "vocab-size-on-encoder",
        _base(
            input_features=[
                {"name": "c", "type": "category", "encoder": {"type": "dense", "vocab_size": 10}}
            ]
        ),
    )
    yield (
        "written",
        "timeseries",
        _base(input_features=[{"name": "ts", "type": "timeseries", "encoder": {"type": "rnn"}}]),
    )
    yield (
        "written",
        "h3-date-bag-set-vector",
        _base(
            input_features=[
                {"name": "h", "type": "h3"},
                {"name": "d", "type": "date"},
                {"name": "b", "type": "bag"},
                {"name": "s", "type": "set"},
                {"name": "v", "type": "vector"},
            ]
        ),
    )


def old_syntax_cases() -> Iterator[Case]:
    """Syntax Ludwig upgrades silently (configs without ``ludwig_version``)."""
    yield "old", "training", {**_base(), "training": {"epochs": 2}}
    yield (
        "old",
        "unnested-encoder",
        _base(
            input_features=[
                {
                    "name": "t",
                    "type": "text",
                    "encoder": "rnn",
                    "cell_type": "lstm",
                    "num_layers": 2,
                }
            ]
        ),
    )
    yield (
        "old",
        "unnested-decoder",
        _base(
            output_features=[
                {"name": "y", "type": "category", "num_fc_layers": 2, "output_size": 32}
            ]
        ),
    )
    yield (
        "old",
        "split-probabilities",
        _base(preprocessing={"split_probabilities": [0.6, 0.2, 0.2]}),
    )
    yield "old", "stratify", _base(preprocessing={"stratify": "y"})
    yield "old", "force-split", _base(preprocessing={"force_split": True})
    yield "old", "type-preprocessing", _base(preprocessing={"text": {"lowercase": True}})
    yield "old", "numerical", _base(input_features=[{"name": "x", "type": "numerical"}])
    yield (
        "old",
        "word-tokenizer",
        _base(
            input_features=[
                {"name": "t", "type": "text", "preprocessing": {"word_tokenizer": "space"}}
            ]
        ),
    )
    yield (
        "old",
        "bias",
        _base(
            input_features=[
                {"name": "x", "type": "number", "encoder": {"type": "dense", "bias": False}}
            ]
        ),
    )
    yield (
        "old",
        "scheduler-keys",
        _base(trainer={"decay": True, "reduce_learning_rate_on_plateau": 2}),
    )
    yield "old", "trainer-type", _base(trainer={"type": "trainer", "epochs": 3})
    yield "old", "hyperopt-empty", _base(hyperopt={})
    yield "old", "eval-batch-size-0", _base(trainer={"eval_batch_size": 0})
    yield (
        "old",
        "backfill",
        _base(
            input_features=[
                {
                    "name": "x",
                    "type": "number",
                    "preprocessing": {"missing_value_strategy": "backfill"},
                }
            ]
        ),
    )
    yield (
        "old",
        "defaults-type",
        _base(defaults={"number": {"type": "number", "preprocessing": {}}}),
    )
    yield "old", "max-batch-size", _base(trainer={"increase_batch_size_on_plateau_max": 256})


_MUTATIONS: list[tuple[str, tuple[Any, ...], Any]] = [
    ("trainer-unknown-key", ("trainer", "epochz"), 3),
    ("trainer-epochs-string", ("trainer", "epochs"), "many"),
    ("trainer-epochs-zero", ("trainer", "epochs"), 0),
    ("trainer-epochs-float", ("trainer", "epochs"), 2.5),
    ("trainer-lr-negative", ("trainer", "learning_rate"), -1.0),
    ("trainer-batch-size-word", ("trainer", "batch_size"), "big"),
    ("trainer-optimizer-bad", ("trainer", "optimizer"), {"type": "adamm"}),
    ("trainer-shuffle-string", ("trainer", "should_shuffle"), "yes"),
    ("feature-unknown-key", ("input_features", 0, "colour"), "red"),
    ("feature-bad-type", ("input_features", 0, "type"), "numbr"),
    ("feature-no-name", ("input_features", 0, "name"), None),
    ("encoder-bad-type", ("input_features", 0, "encoder"), {"type": "transformerx"}),
    ("encoder-dropout-2", ("input_features", 0, "encoder"), {"type": "dense", "dropout": 2.0}),
    ("encoder-unknown-key", ("input_features", 0, "encoder"), {"type": "dense", "size": 3}),
    ("preprocessing-bad-enum", ("input_features", 0, "preprocessing"), {"normalization": "z"}),
    ("preprocessing-unknown", ("input_features", 0, "preprocessing"), {"normalise": True}),
    ("output-bad-type", ("output_features", 0, "type"), "audio"),
    ("output-threshold-string", ("output_features", 0, "threshold"), "half"),
    ("loss-bad-type", ("output_features", 0, "loss"), {"type": "hinge"}),
    ("combiner-bad-type", ("combiner",), {"type": "stack"}),
    ("combiner-unknown-key", ("combiner",), {"type": "concat", "layers": 2}),
    ("combiner-output-size-0", ("combiner",), {"type": "concat", "output_size": 0}),
    ("split-bad-type", ("preprocessing", "split"), {"type": "shuffle"}),
    ("sample-ratio-string", ("preprocessing", "sample_ratio"), "all"),
    ("top-level-unknown", ("trainr",), {"epochs": 1}),
    ("defaults-unknown-part", ("defaults", "number", "encoderr"), {}),
    ("defaults-bad-feature-type", ("defaults", "numbr"), {"preprocessing": {}}),
    ("model-type-bad", ("model_type",), "gbm"),
    ("inputs-empty", ("input_features",), []),
    ("hyperopt-goal-bad", ("hyperopt",), {"goal": "best"}),
    ("backend-string", ("backend",), "local"),
]


def _set_path(config: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(config)
    node: Any = out
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]
    if value is None and isinstance(node, dict):
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    return out


def mutation_cases() -> Iterator[Case]:
    """Valid configs with one thing changed: unknown keys, wrong types, bad enum values."""
    base = _base()
    for name, path, value in _MUTATIONS:
        yield "mutation", name, _set_path(base, path, value)


@functools.cache
def _corpus() -> tuple[Case, ...]:
    cases = [*schema_cases(), *written_cases(), *old_syntax_cases(), *mutation_cases()]
    rendered = rendered_cases([c for c in cases if c[0] in ("schema", "written")])
    return (*cases, *rendered)


def corpus() -> list[Case]:
    """Every case, Ludwig-rendered ones included (this calls Ludwig; built once)."""
    return [(c, n, copy.deepcopy(cfg)) for c, n, cfg in _corpus()]


def ours_valid(config: dict[str, Any]) -> tuple[bool, dict[str, Any] | None, str]:
    import warnings

    from ludwig_nb.config import ConfigError, load_config

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return True, load_config(copy.deepcopy(config)).to_ludwig_dict(), ""
        except ConfigError as err:
            return False, None, str(err)[:300]


def leaf_agreement(ours: Any, theirs: Any) -> tuple[int, int, list[str]]:
    """(leaves equal, leaves in Ludwig's render, the paths that differ)."""
    same = total = 0
    differing: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        nonlocal same, total
        if isinstance(b, dict) and b:
            for key, value in b.items():
                walk(
                    a.get(key, _ABSENT) if isinstance(a, dict) else _ABSENT, value, f"{path}.{key}"
                )
            return
        if (
            isinstance(b, list)
            and b
            and isinstance(b[0], dict)
            and isinstance(a, list)
            and len(a) == len(b)
        ):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{path}[{i}]")
            return
        total += 1
        if a is not _ABSENT and json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True):
            same += 1
        else:
            differing.append(path)

    walk(ours, theirs, "")
    return same, total, differing


_ABSENT = object()


def main() -> None:
    cases = corpus()
    by_category: dict[str, list[int]] = {}
    leaves = [0, 0]
    for category, name, config in cases:
        ok_l, rendered_l, err_l = ludwig_valid(config)
        ok_o, rendered_o, err_o = ours_valid(config)
        counts = by_category.setdefault(category, [0, 0])
        counts[1] += 1
        counts[0] += ok_l == ok_o
        if ok_l != ok_o:
            print(f"DIFF {category}/{name}: ludwig={ok_l} ours={ok_o}\n  L: {err_l}\n  O: {err_o}")
        if ok_l and ok_o:
            same, total, differing = leaf_agreement(rendered_o, rendered_l)
            leaves[0] += same
            leaves[1] += total
            if differing:
                print(f"RENDER {category}/{name}: {len(differing)} leaves differ: {differing[:6]}")
    for category, (same, total) in by_category.items():
        print(f"{category}: same verdict {same}/{total}")
    if len(sys.argv) > 1:  # save Ludwig's verdicts: python -m tests.config.ludwig_corpus out.json
        with open(sys.argv[1], "w") as out:
            json.dump({k: list(v) for k, v in _VERDICTS.items()}, out)
    every = [sum(v[0] for v in by_category.values()), sum(v[1] for v in by_category.values())]
    print(f"all: same verdict {every[0]}/{every[1]}; rendered leaves equal {leaves[0]}/{leaves[1]}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
