"""One list of engine names; ``auto`` picks builtin, else Ludwig, else the located refusal."""

from __future__ import annotations

import pytest

from ludwig_nb.config import UnsupportedByEngine, load_config
from ludwig_nb.engines import registry
from ludwig_nb.engines.base import EngineUnavailable
from ludwig_nb.engines.ludwig import engine as ludwig_engine

TABULAR = "input_features: [{name: x, type: number}]\noutput_features: [{name: y, type: binary}]\n"
AUDIO = "input_features:\n  - {name: x, type: audio}\noutput_features: [{name: y, type: binary}]\n"


@pytest.fixture
def ludwig_installed(monkeypatch):
    monkeypatch.setattr(ludwig_engine, "ludwig_missing", lambda: None)


@pytest.fixture
def ludwig_absent(monkeypatch):
    monkeypatch.setattr(ludwig_engine, "ludwig_missing", lambda: "engine: ludwig needs X")


def test_the_names_are_one_list():
    assert registry.ENGINE_NAMES == ("auto", "builtin", "ludwig", "ray")
    with pytest.raises(ValueError, match="auto, builtin, ludwig"):
        registry.get_engine("tensorflow")


def test_auto_prefers_the_builtin_engine(ludwig_installed):
    assert registry.select_engine("auto", load_config(TABULAR)).name == "builtin"


def test_auto_falls_back_to_ludwig_when_installed(ludwig_installed):
    assert registry.select_engine("auto", load_config(AUDIO)).name == "ludwig"


def test_auto_without_ludwig_raises_the_located_refusal_naming_the_extra(ludwig_absent):
    with pytest.raises(UnsupportedByEngine) as info:
        registry.select_engine("auto", load_config(AUDIO))
    assert (info.value.line, info.value.path) == (2, "input_features[0].type")
    assert 'pip install "ludwig_nb[ludwig]"' in str(info.value)


def test_explicit_builtin_refuses_what_it_cannot_run(ludwig_installed):
    with pytest.raises(UnsupportedByEngine):
        registry.select_engine("builtin", load_config(AUDIO))


def test_explicit_ludwig_without_ludwig_says_what_to_install(ludwig_absent):
    with pytest.raises(EngineUnavailable, match="needs X"):
        registry.select_engine("ludwig", load_config(TABULAR))


def test_ludwig_missing_looks_the_package_up_without_importing(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert ludwig_engine.ludwig_missing() == (
        'engine: ludwig needs Ludwig installed: pip install "ludwig_nb[ludwig]"'
    )


def test_ludwig_refuses_what_it_would_drop_at_the_configs_line(ludwig_installed):
    text = TABULAR + (
        "backend:\n  type: ray\nhyperopt:\n  goal: minimize\n  parameters:\n"
        "    trainer.learning_rate: {space: loguniform, lower: 0.0001, upper: 0.1}\n"
    )
    with pytest.raises(UnsupportedByEngine) as info:
        registry.get_engine("ludwig").check(load_config(text))
    assert [(e.line, e.path) for e in info.value.errors] == [(4, "backend.type"), (5, "hyperopt")]
    with pytest.raises(UnsupportedByEngine):  # auto: neither engine runs it
        registry.select_engine("auto", load_config(text))


@pytest.mark.parametrize("ludwig", ["ludwig_installed", "ludwig_absent"])
def test_auto_refuses_a_hyperopt_config_pointing_at_our_search_entry_points(request, ludwig):
    request.getfixturevalue(ludwig)
    text = TABULAR + (
        "hyperopt:\n  parameters:\n"
        "    trainer.learning_rate: {space: loguniform, lower: 0.0001, upper: 0.1}\n"
    )
    with pytest.raises(UnsupportedByEngine) as info:
        registry.select_engine("auto", load_config(text))
    assert info.value.path == "hyperopt" and info.value.line == 3
    message = str(info.value)
    assert "%%ludwig_hyperopt" in message and "ludwig_nb.hyperopt(" in message
    assert "`ludwig hyperopt`" not in message
