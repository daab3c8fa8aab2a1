"""Rendering: every section and default filled in with Ludwig 0.11's names and values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ludwig_nb.config import LUDWIG_VERSION, ConfigError, ConfigWarning, load_config


def _render(inputs: str, outputs: str = "  - {name: y, type: binary}\n", extra: str = "") -> Any:
    text = f"input_features:\n{inputs}output_features:\n{outputs}{extra}"
    return load_config(text).to_dict()


def test_top_level_sections_are_all_there(minimal: str) -> None:
    rendered = load_config(minimal).to_dict()
    assert list(rendered) == [
        "model_type",
        "input_features",
        "output_features",
        "combiner",
        "trainer",
        "preprocessing",
        "defaults",
        "hyperopt",
        "backend",
        "ludwig_version",
        "gpu_watch",
    ]
    assert rendered["model_type"] == "ecd"
    assert rendered["ludwig_version"] == LUDWIG_VERSION
    assert rendered["hyperopt"] is None and rendered["backend"] is None


def test_trainer_defaults(minimal: str) -> None:
    trainer = load_config(minimal).trainer
    expected = {
        "epochs": 100,
        "train_steps": None,
        "batch_size": "auto",
        "eval_batch_size": None,
        "effective_batch_size": "auto",
        "gradient_accumulation_steps": "auto",
        "learning_rate": 0.001,
        "early_stop": 5,
        "regularization_type": "l2",
        "regularization_lambda": 0.0,
        "steps_per_checkpoint": 0,
        "checkpoints_per_epoch": 0,
        "evaluate_training_set": False,
        "skip_all_evaluation": False,
        "should_shuffle": True,
        "use_mixed_precision": False,
        "compile": False,
        "max_batch_size": 2**40,
        "validation_field": "y",
        "validation_metric": "roc_auc",
    }
    assert {k: trainer[k] for k in expected} == expected
    assert trainer["optimizer"] == {
        "type": "adam",
        "betas": [0.9, 0.999],
        "eps": 1e-08,
        "weight_decay": 0.0,
        "amsgrad": False,
    }
    assert trainer["gradient_clipping"] == {
        "clipglobalnorm": 0.5,
        "clipnorm": None,
        "clipvalue": None,
    }
    scheduler = trainer["learning_rate_scheduler"]
    assert (scheduler["decay"], scheduler["decay_rate"], scheduler["warmup_fraction"]) == (
        None,
        0.96,
        0.0,
    )


def test_optimizer_parameters_follow_its_type(minimal: str) -> None:
    cfg = load_config(minimal + "trainer:\n  optimizer: {type: rmsprop, momentum: 0.5}\n")
    assert cfg.trainer["optimizer"] == {
        "type": "rmsprop",
        "momentum": 0.5,
        "alpha": 0.99,
        "eps": 1e-08,
        "centered": False,
        "weight_decay": 0.0,
    }


def test_global_preprocessing_defaults(minimal: str) -> None:
    assert load_config(minimal).preprocessing == {
        "sample_ratio": 1.0,
        "sample_size": None,
        "oversample_minority": None,
        "undersample_majority": None,
        "split": {"type": "random", "probabilities": [0.7, 0.1, 0.2]},
        "global_max_sequence_length": None,
    }


def test_fixed_split_defaults_to_the_split_column(minimal: str) -> None:
    cfg = load_config(minimal + "preprocessing:\n  split: {type: fixed}\n")
    assert cfg.preprocessing["split"] == {"type": "fixed", "column": "split"}


def test_number_input_and_output_preprocessing() -> None:
    rendered = _render("  - {name: x, type: number}\n", "  - {name: y, type: number}\n")
    pre_in = rendered["input_features"][0]["preprocessing"]
    pre_out = rendered["output_features"][0]["preprocessing"]
    assert pre_in["missing_value_strategy"] == "fill_with_const"
    assert pre_in["normalization"] == "zscore"
    assert pre_in["fill_value"] == 0.0
    assert pre_out["missing_value_strategy"] == "drop_row"
    assert pre_out["normalization"] is None
    assert rendered["input_features"][0]["encoder"] == {"type": "passthrough", "skip": False}
    out = rendered["output_features"][0]
    assert out["decoder"]["type"] == "regressor"
    assert out["loss"] == {"type": "mean_squared_error", "weight": 1.0}
    assert out["default_validation_metric"] == "mean_squared_error"


@pytest.mark.parametrize(
    ("ftype", "encoder", "keys"),
    [
        ("category", "dense", {"embedding_size": 50, "dropout": 0.0}),
        (
            "text",
            "parallel_cnn",
            {
                "num_filters": 256,
                "filter_size": 3,
                "reduce_output": "sum",
                "embedding_size": 256,
                "num_fc_layers": None,
            },
        ),
        (
            "sequence",
            "embed",
            {"embedding_size": 256, "reduce_output": "sum", "weights_initializer": "uniform"},
        ),
        ("set", "embed", {"embedding_size": 50, "output_size": 10, "num_fc_layers": 0}),
        ("bag", "embed", {"force_embedding_size": False, "output_size": 10}),
        ("vector", "dense", {"output_size": 256, "num_layers": 1}),
        ("date", "embed", {"embedding_size": 10, "output_size": 10}),
        ("binary", "passthrough", {}),
    ],
)
def test_default_encoder_per_type(ftype: str, encoder: str, keys: dict[str, Any]) -> None:
    rendered = _render(f"  - {{name: x, type: {ftype}}}\n")
    got = rendered["input_features"][0]["encoder"]
    assert got["type"] == encoder
    assert {k: got[k] for k in keys} == keys


def test_text_and_sequence_preprocessing() -> None:
    rendered = _render("  - {name: t, type: text}\n  - {name: s, type: sequence}\n")
    text, seq = (f["preprocessing"] for f in rendered["input_features"])
    assert (text["tokenizer"], text["lowercase"], text["max_sequence_length"]) == (
        "space_punct",
        False,
        256,
    )
    assert (seq["tokenizer"], seq["lowercase"], seq["most_common"]) == ("space", False, 20000)
    assert text["padding_symbol"] == "<PAD>" and text["unknown_symbol"] == "<UNK>"


def test_category_output_keys() -> None:
    out = _render("  - {name: x, type: number}\n", "  - {name: y, type: category}\n")[
        "output_features"
    ][0]
    assert (out["top_k"], out["decoder"]["type"], out["loss"]["type"]) == (
        3,
        "classifier",
        "softmax_cross_entropy",
    )
    assert out["preprocessing"]["most_common"] == 10000
    assert out["default_validation_metric"] == "accuracy"


def test_rnn_encoder_defaults() -> None:
    enc = _render("  - {name: t, type: text, encoder: {type: rnn}}\n")["input_features"][0][
        "encoder"
    ]
    assert (enc["cell_type"], enc["state_size"], enc["reduce_output"], enc["num_layers"]) == (
        "rnn",
        256,
        "last",
        1,
    )


def test_string_encoder_is_shorthand_for_its_type() -> None:
    with pytest.warns(ConfigWarning, match="old syntax upgraded"):
        rendered = _render("  - {name: t, type: text, encoder: transformer}\n")
    enc = rendered["input_features"][0]["encoder"]
    assert (enc["type"], enc["num_heads"], enc["dropout"]) == ("transformer", 8, 0.1)


def test_column_defaults_to_name_and_proc_column_is_kept() -> None:
    feature = _render("  - {name: x, type: number, proc_column: x_abc}\n")["input_features"][0]
    assert (feature["column"], feature["proc_column"]) == ("x", "x_abc")


def test_defaults_section_applies_to_features_and_feature_wins() -> None:
    extra = (
        "defaults:\n  number:\n    preprocessing:\n      normalization: minmax\n"
        "      missing_value_strategy: fill_with_mean\n"
        "    encoder: {type: dense, output_size: 32}\n"
    )
    inputs = (
        "  - {name: a, type: number}\n  - {name: b, type: number, preprocessing: "
        "{normalization: log1p}, encoder: {type: passthrough}}\n"
    )
    rendered = _render(inputs, extra=extra)
    a, b = rendered["input_features"]
    assert a["preprocessing"]["normalization"] == "minmax"
    assert a["preprocessing"]["missing_value_strategy"] == "fill_with_mean"
    assert (a["encoder"]["type"], a["encoder"]["output_size"]) == ("dense", 32)
    assert b["preprocessing"]["normalization"] == "log1p"
    assert b["preprocessing"]["missing_value_strategy"] == "fill_with_mean"
    assert b["encoder"] == {"type": "passthrough", "skip": False}
    assert rendered["defaults"]["number"]["preprocessing"]["normalization"] == "minmax"
    assert rendered["defaults"]["category"]["encoder"]["type"] == "dense"


def test_a_mistake_in_defaults_is_reported_once_where_written(
    fail: Callable[..., ConfigError], minimal: str
) -> None:
    err = fail(minimal + "defaults:\n  number:\n    preprocessing:\n      normalization: x\n")
    assert [(e.line, e.path) for e in err.errors] == [
        (10, "defaults.number.preprocessing.normalization"),
    ]


def test_a_defaults_entry_takes_only_its_parts(
    fail: Callable[..., ConfigError], minimal: str
) -> None:
    err = fail(minimal + "defaults:\n  number:\n    encoderr: {}\n")
    assert (err.line, err.path, err.hint) == (
        9,
        "defaults.number.encoderr",
        "did you mean 'encoder'?",
    )


def test_unknown_type_in_defaults_is_ignored_with_a_warning(minimal: str) -> None:
    with pytest.warns(ConfigWarning):
        cfg = load_config(minimal + "defaults:\n  numbr: {}\n")
    note = cfg.warnings[0]
    assert (note.line, note.path, note.hint) == (8, "defaults.numbr", "did you mean 'number'?")
    assert "numbr" not in cfg.to_dict()["defaults"]


def test_old_per_type_preprocessing_moves_to_defaults(minimal: str) -> None:
    with pytest.warns(ConfigWarning):
        cfg = load_config(
            "input_features:\n  - {name: t, type: text}\noutput_features:\n"
            "  - {name: y, type: binary}\npreprocessing:\n  text:\n    lowercase: true\n",
        )
    note = cfg.warnings[0]
    assert (note.line, note.path) == (6, "preprocessing.text")
    assert note.hint == "move it to defaults.text.preprocessing"
    assert cfg.to_dict()["defaults"]["text"]["preprocessing"]["lowercase"] is True
    assert cfg.input_features[0]["preprocessing"]["lowercase"] is True


def test_to_ludwig_dict_drops_only_gpu_watch(minimal: str) -> None:
    cfg = load_config(minimal)
    ludwig = cfg.to_ludwig_dict()
    full = cfg.to_dict()
    assert "gpu_watch" not in ludwig
    assert full.pop("gpu_watch") == cfg.gpu_watch.to_dict()
    assert ludwig == full


def test_llm_configs_are_valid_and_rendered_with_ludwigs_defaults() -> None:
    text = (
        "model_type: llm\nbase_model: facebook/opt-350m\n"
        "input_features: [{name: q, type: text}]\noutput_features: [{name: a, type: text}]\n"
        "adapter: {type: lora}\ntrainer: {type: finetune}\n"
    )
    cfg = load_config(text)
    rendered = cfg.to_ludwig_dict()
    assert (rendered["model_type"], rendered["base_model"]) == ("llm", "facebook/opt-350m")
    assert rendered["adapter"]["type"] == "lora" and rendered["adapter"]["r"] == 8
    assert rendered["trainer"]["type"] == "finetune"


def test_a_rendered_llm_config_loads_again_unchanged() -> None:
    """A pilot run, a sweep's or a search's trial loads the rendered config once more."""
    text = (
        "model_type: llm\nbase_model: facebook/opt-350m\n"
        "input_features: [{name: q, type: text}]\noutput_features: [{name: a, type: text}]\n"
        "adapter: {type: lora}\ntrainer: {type: finetune}\n"
    )
    rendered = load_config(text).to_dict()
    assert rendered["defaults"]["text"]["encoder"]["type"] == "passthrough"
    assert load_config(rendered).to_dict() == rendered


def test_llm_config_mistakes_are_located(fail: Callable[..., ConfigError]) -> None:
    err = fail(
        "model_type: llm\nbase_model: x\ninput_features: [{name: q, type: text}]\n"
        "output_features: [{name: a, type: text}]\nadapter: {type: loraa}\n",
    )
    assert (err.line, err.path, err.hint) == (5, "adapter.type", "did you mean 'lora'?")


def test_fc_layers_keep_only_what_was_written(minimal: str) -> None:
    cfg = load_config(
        minimal
        + "combiner:\n  type: concat\n  fc_layers:\n    - {output_size: 64}\n    - {dropout: 0.2}\n"
    )
    assert cfg.combiner["fc_layers"] == [{"output_size": 64}, {"dropout": 0.2}]


def test_fc_layers_must_be_a_list(fail: Callable[..., ConfigError], minimal: str) -> None:
    err = fail(minimal + "combiner:\n  type: concat\n  fc_layers: 3\n")
    assert (err.line, err.path) == (9, "combiner.fc_layers")
