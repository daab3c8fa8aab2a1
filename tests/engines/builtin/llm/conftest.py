"""LLM configs over the tiny offline models (tests/fixtures/llm/tiny.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engines.builtin.conftest import render

pytest.importorskip("peft")


def llm_config(base: Path, **sections: Any) -> dict[str, Any]:
    """A rendered LLM config on ``base``: review -> label, greedy answers of 4 tokens."""
    trainer = {
        "type": "finetune",
        "epochs": 1,
        "batch_size": 16,
        "eval_batch_size": 64,
        "learning_rate": 0.003,
        "optimizer": {"type": "adamw"},
        **sections.pop("trainer", {}),
    }
    if trainer["type"] == "none":  # Ludwig's zero-shot trainer has no optimizer
        trainer.pop("optimizer")
    config = {
        "model_type": "llm",
        "base_model": str(base),
        "input_features": [{"name": "review", "type": "text"}],
        "output_features": [{"name": "label", "type": "text"}],
        "prompt": {"template": "Review: {review}\nSentiment:"},
        "generation": {"max_new_tokens": 4, "do_sample": False},
        "trainer": trainer,
        **sections,
    }
    return render(config)


@pytest.fixture
def run_engine(run_engine):
    """The engine runner, on ``LUDWIG_NB_LLM_DEVICE`` when set (gpu_check.sh sets cuda)."""
    import os

    device = os.environ.get("LUDWIG_NB_LLM_DEVICE")
    if not device:
        return run_engine
    return lambda *args, **job: run_engine(*args, **{"device": device, **job})
