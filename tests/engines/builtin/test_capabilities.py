"""What the built-in engine runs; everything else valid in Ludwig is named, never dropped."""

from __future__ import annotations

import pytest

from ludwig_nb.config import UnsupportedByEngine, load_config
from ludwig_nb.engines.builtin.capabilities import (
    BUILTIN_ENCODERS,
    BUILTIN_INPUT_TYPES,
    BUILTIN_OUTPUT_TYPES,
    check_builtin,
)

HEAD = "output_features:\n  - name: y\n    type: binary\ninput_features:\n  - name: x\n"


def _unsupported(text: str) -> UnsupportedByEngine:
    cfg = load_config(text)  # valid Ludwig: the config layer accepts it
    with pytest.raises(UnsupportedByEngine) as info:
        check_builtin(cfg)
    return info.value


@pytest.mark.parametrize("ftype", ["audio", "timeseries", "h3"])
def test_input_types_outside_the_engine(ftype: str) -> None:
    err = _unsupported(HEAD + f"    type: {ftype}\n")
    assert (err.line, err.path) == (6, "input_features[0].type")
    assert f"{ftype} features are not run by the built-in engine" in err.message
    assert err.engine == "ludwig"
    assert err.hint is not None and 'pip install "ludwig_nb[ludwig]"' in err.hint


@pytest.mark.parametrize("ftype", ["text", "sequence", "image", "timeseries"])
def test_output_types_outside_the_engine(ftype: str) -> None:
    text = (
        f"input_features:\n  - {{name: x, type: number}}\noutput_features:\n"
        f"  - name: y\n    type: {ftype}\n"
    )
    err = _unsupported(text)
    assert (err.line, err.path) == (5, "output_features[0].type")


@pytest.mark.parametrize(
    ("encoder", "ftype"),
    [
        ("bert", "text"),
        ("stacked_cnn", "text"),
        ("sparse", "category"),
        ("wave", "date"),
        ("cnnrnn", "sequence"),
    ],
)
def test_encoders_outside_the_engine(encoder: str, ftype: str) -> None:
    err = _unsupported(HEAD + f"    type: {ftype}\n    encoder:\n      type: {encoder}\n")
    located = [(e.line, e.path) for e in err.errors]
    assert (8, "input_features[0].encoder.type") in located
    assert any(encoder in e.message for e in err.errors)


@pytest.mark.parametrize(
    ("extra", "line", "path"),
    [
        ("combiner:\n  type: tabnet\n", 8, "combiner.type"),
        ("trainer:\n  optimizer: {type: lbfgs}\n", 8, "trainer.optimizer.type"),
        ("preprocessing:\n  split: {type: hash, column: x}\n", 8, "preprocessing.split.type"),
        (
            "hyperopt:\n  parameters:\n    trainer.epochs: {space: choice, categories: [1]}\n",
            7,
            "hyperopt",
        ),
        ("trainer:\n  enable_profiling: true\n", 8, "trainer.enable_profiling"),
        ("preprocessing:\n  oversample_minority: 0.5\n", 8, "preprocessing.oversample_minority"),
    ],
)
def test_options_outside_the_engine(extra: str, line: int, path: str) -> None:
    err = _unsupported(HEAD + "    type: number\n" + extra)
    assert (err.line, err.path) == (line, path)


@pytest.mark.parametrize(
    ("feature", "key"),
    [
        (
            "    type: text\n    encoder: {type: parallel_cnn, pool_function: mean}\n",
            "encoder.pool_function",
        ),
        (
            "    type: text\n    encoder: {type: embed, representation: sparse}\n",
            "encoder.representation",
        ),
        (
            "    type: number\n    preprocessing: {outlier_strategy: fill_with_mean}\n",
            "preprocessing.outlier_strategy",
        ),
    ],
)
def test_input_options_the_engine_would_ignore_are_named(feature: str, key: str) -> None:
    err = _unsupported(HEAD + feature)
    assert err.path == f"input_features[0].{key}"
    assert "input feature 'x'" in err.message


@pytest.mark.parametrize(
    ("ftype", "extra", "key"),
    [
        ("binary", "    calibration: true\n", "calibration"),
        ("binary", "    loss: {robust_lambda: 1}\n", "loss.robust_lambda"),
        ("category", "    loss: {confidence_penalty: 0.1}\n", "loss.confidence_penalty"),
        ("number", "    clip: [0, 1]\n", "clip"),
    ],
)
def test_output_options_the_engine_would_ignore_are_named(ftype: str, extra: str, key: str) -> None:
    text = (
        "input_features:\n  - {name: x, type: number}\noutput_features:\n"
        f"  - name: y\n    type: {ftype}\n{extra}"
    )
    err = _unsupported(text)
    assert (err.line, err.path) == (6, f"output_features[0].{key}")
    assert "output feature 'y'" in err.message


def test_feature_level_options_outside_the_engine() -> None:
    err = _unsupported(
        HEAD + "    type: text\n    preprocessing:\n      tokenizer: english_lemmatize\n"
        "    encoder: {type: rnn, cell_type: lstm, pretrained_embeddings: g.txt}\n"
    )
    assert [(e.line, e.path) for e in err.errors] == [
        (8, "input_features[0].preprocessing.tokenizer"),
        (9, "input_features[0].encoder.pretrained_embeddings"),
    ]


def test_every_problem_is_listed() -> None:
    err = _unsupported(
        HEAD + "    type: audio\ncombiner: {type: sequence}\ntrainer: {optimizer: lbfgs}\n"
    )
    assert [e.path for e in err.errors] == [
        "input_features[0].type",
        "combiner.type",
        "trainer.optimizer.type",
    ]
    # an LLM config is the LLM engine's (engines/builtin/llm/support.py): accepted
    check_builtin(
        load_config(
            "model_type: llm\nbase_model: m\ninput_features: [{name: q, type: text}]\n"
            "output_features: [{name: a, type: text}]\n"
        )
    )


def test_ray_backend_points_at_engine_ray() -> None:
    text = HEAD + "    type: number\nbackend:\n  type: ray\n"
    err = _unsupported(text)
    assert (err.path, err.engine) == ("backend.type", "ray")
    assert err.hint is not None and "engine: ray" in err.hint and "ludwig_nb[ray]" in err.hint


def test_schema_errors_are_the_config_layers_and_never_engine_errors() -> None:
    text = HEAD + "    type: audio\ntrainer:\n  epochs: 0\n"
    with pytest.raises(Exception) as info:
        load_config(text)
    assert not isinstance(info.value, UnsupportedByEngine)
    assert [e.path for e in info.value.errors] == ["trainer.epochs"]  # type: ignore[attr-defined]


def test_a_dict_source_is_refused_without_lines() -> None:
    cfg = load_config(
        {
            "input_features": [{"name": "x", "type": "audio"}],
            "output_features": [{"name": "y", "type": "binary"}],
        }
    )
    with pytest.raises(UnsupportedByEngine) as info:
        check_builtin(cfg)
    assert (info.value.line, info.value.path) == (None, "input_features[0].type")


def test_data_layer_types_are_the_engines() -> None:
    from ludwig_nb.engines.builtin.preprocessing.pipeline import INPUT_TYPES, OUTPUT_TYPES

    # image inputs are the engine's own (engines/builtin/image/), not the data layer's
    assert set(BUILTIN_ENCODERS) == set(BUILTIN_INPUT_TYPES) == {*INPUT_TYPES, "image"}
    assert BUILTIN_OUTPUT_TYPES == OUTPUT_TYPES


@pytest.mark.parametrize("ftype", BUILTIN_INPUT_TYPES)
def test_every_supported_input_encoder_loads(ftype: str) -> None:
    for encoder in BUILTIN_ENCODERS[ftype]:
        cfg = load_config(HEAD + f"    type: {ftype}\n    encoder: {{type: {encoder}}}\n")
        assert cfg.input_features[0]["encoder"]["type"] == encoder


@pytest.mark.parametrize("ftype", BUILTIN_OUTPUT_TYPES)
def test_every_supported_output_loads(ftype: str) -> None:
    text = (
        f"input_features:\n  - {{name: x, type: number}}\noutput_features:\n"
        f"  - {{name: y, type: {ftype}}}\n"
    )
    assert load_config(text).output_features[0]["type"] == ftype


IMAGE_HEAD = (
    "output_features:\n  - {name: y, type: binary}\ninput_features:\n  - name: img\n"
    "    type: image\n"
)


@pytest.mark.parametrize("encoder", ["stacked_cnn", "_resnet_legacy", "mlp_mixer"])
def test_image_inputs_with_ludwigs_own_encoders_run(encoder: str) -> None:
    check_builtin(load_config(IMAGE_HEAD + f"    encoder: {{type: {encoder}}}\n"))
    text = IMAGE_HEAD + "    encoder: {type: _vit_legacy, use_pretrained: false}\n"
    check_builtin(load_config(text + "    augmentation: true\n"))


def test_image_refusals_are_located_at_their_keys() -> None:
    text = (
        IMAGE_HEAD
        + "    encoder: {type: _vit_legacy}\n"
        + "    augmentation:\n      - {type: random_blur}\n      - {type: auto_augmentation}\n"
        + "    preprocessing: {num_classes: 3}\n"
        + "  - {name: mask, type: image, encoder: {type: unet}}\n"
    )
    err = _unsupported(text)
    where = {e.path: e for e in err.errors}  # type: ignore[attr-defined]
    assert "Hugging Face hub" in where["input_features[0].encoder.use_pretrained"].message
    assert where["input_features[0].augmentation[1].type"].line == 9
    assert "class masks" in where["input_features[0].preprocessing.num_classes"].message
    assert "unet image encoder" in where["input_features[1].encoder.type"].message
    assert err.engine == "ludwig"


def test_torchvision_families_need_a_torchvision_that_loads(monkeypatch) -> None:
    from ludwig_nb.engines.builtin.image import capabilities

    monkeypatch.setattr(
        capabilities, "_torchvision_problem", lambda: "torchvision is not installed"
    )
    err = _unsupported(IMAGE_HEAD + "    encoder: {type: efficientnet, use_pretrained: false}\n")
    assert err.path == "input_features[0].encoder.type"
    assert "needs torchvision (torchvision is not installed)" in err.message
    assert "stacked_cnn" in (err.hint or "")


def test_missing_pretrained_weights_are_an_error_no_engine_runs_past(monkeypatch) -> None:
    from ludwig_nb.config import ConfigError
    from ludwig_nb.engines.builtin.image import capabilities, torchvision_encoders

    monkeypatch.setattr(capabilities, "_torchvision_problem", lambda: None)
    monkeypatch.setattr(
        torchvision_encoders, "pretrained_problem", lambda encoder: "put resnet18.pth at /x"
    )
    with pytest.raises(ConfigError) as info:
        check_builtin(load_config(IMAGE_HEAD + "    encoder: {type: resnet, model_variant: 18}\n"))
    assert not isinstance(info.value, UnsupportedByEngine)  # engine: auto does not move on
    assert info.value.path == "input_features[0].encoder.use_pretrained"
    assert "put resnet18.pth at /x" in info.value.message
