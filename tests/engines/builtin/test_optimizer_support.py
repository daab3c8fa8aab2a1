"""Every optimizer Ludwig names is run by the built-in engine or refused at its key."""

from __future__ import annotations

import importlib.metadata

import pytest

from ludwig_nb.config import UnsupportedByEngine, load_config
from ludwig_nb.config.schema.ludwig_json import snapshot_node
from ludwig_nb.engines.builtin.capabilities import check_builtin
from ludwig_nb.engines.builtin.optimizer_support import (
    BITSANDBYTES_OPTIMIZERS,
    TORCH_OPTIMIZERS,
    bitsandbytes_problem,
)

HEAD = "input_features: [{name: x, type: number}]\noutput_features: [{name: y, type: binary}]\n"
LLM_HEAD = (
    "model_type: llm\nbase_model: some/model\n"
    "input_features: [{name: q, type: text}]\noutput_features: [{name: a, type: text}]\n"
)


def _trainer(head: str, optimizer: str) -> str:
    """``head`` and a trainer section with ``optimizer`` on its last line."""
    finetune = "  type: finetune\n" if head == LLM_HEAD else ""
    return f"{head}trainer:\n{finetune}  optimizer: {optimizer}\n"


def _ludwig_optimizers() -> set[str]:
    node = snapshot_node("ecd", "trainer", "optimizer", "type")
    assert isinstance(node, dict)
    return set(node["enum"])


def test_the_engine_covers_every_optimizer_ludwig_names_but_lbfgs():
    from ludwig_nb.engines.builtin import optim

    assert _ludwig_optimizers() - {"lbfgs"} == set(TORCH_OPTIMIZERS + BITSANDBYTES_OPTIMIZERS)
    assert set(optim.OPTIMIZERS) == set(TORCH_OPTIMIZERS)
    assert set(optim.BITSANDBYTES_OPTIMIZERS) == set(BITSANDBYTES_OPTIMIZERS)


@pytest.mark.parametrize("head", [HEAD, LLM_HEAD], ids=["ecd", "llm"])
@pytest.mark.parametrize("name", sorted(set(BITSANDBYTES_OPTIMIZERS) - {"sgd_8bit"}))
def test_bitsandbytes_optimizers_are_accepted_with_ludwigs_defaults(name, head):
    check_builtin(load_config(_trainer(head, f"{{type: {name}}}")))


@pytest.mark.parametrize("head", [HEAD, LLM_HEAD], ids=["ecd", "llm"])
def test_without_bitsandbytes_the_refusal_says_what_to_install(head, monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    text = _trainer(head, "{type: paged_adamw_8bit}")
    with pytest.raises(UnsupportedByEngine) as info:
        check_builtin(load_config(text))
    err = info.value
    assert (err.line, err.path) == (text.count("\n"), "trainer.optimizer.type")
    assert "bitsandbytes is not installed" in err.message
    assert err.hint is not None and 'pip install "bitsandbytes>=0.50"' in err.hint
    assert "engine: ludwig" in err.hint and "adamw" in err.hint  # and what runs without it


def test_a_bitsandbytes_older_than_0_50_is_named():
    assert bitsandbytes_problem("0.41.3") is not None and "0.41.3" in bitsandbytes_problem("0.41.3")
    assert bitsandbytes_problem("0.50.2") is None and bitsandbytes_problem("1.0") is None


@pytest.mark.parametrize(
    ("optimizer", "key"),
    [
        ("{type: sgd_8bit}", "momentum"),  # Ludwig's default momentum is 0
        ("{type: lars, momentum: 0}", "momentum"),
        ("{type: adam_8bit, amsgrad: true}", "amsgrad"),
        ("{type: rmsprop_8bit, centered: true}", "centered"),
        ("{type: adagrad_8bit, lr_decay: 0.1}", "lr_decay"),
    ],
)
def test_settings_bitsandbytes_refuses_are_located_before_the_run(optimizer, key):
    text = HEAD + f"trainer:\n  optimizer: {optimizer}\n"
    with pytest.raises(UnsupportedByEngine) as info:
        check_builtin(load_config(text))
    err = info.value
    assert err.path == f"trainer.optimizer.{key}" and err.line == 4
    assert key in err.message and err.hint is not None and key in err.hint


def test_lbfgs_is_still_refused_and_the_alternatives_listed():
    with pytest.raises(UnsupportedByEngine) as info:
        check_builtin(load_config(HEAD + "trainer:\n  optimizer: {type: lbfgs}\n"))
    err = info.value
    assert err.path == "trainer.optimizer.type"
    assert err.hint is not None and "engine: ludwig" in err.hint and "lion_8bit" in err.hint
