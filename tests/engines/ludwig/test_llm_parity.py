"""The same LLM config trains with real Ludwig 0.11 and the built-in engine, on the same tiny
local model and rows, and their losses agree within the built-in engine's own seed noise.

Run by scripts/ci/test_ludwig.sh in the Ludwig venv (PEFT and bitsandbytes 0.50 installed over
Ludwig's pin). Ludwig pads on the left and we on the right, and the two shuffle differently:
the epoch's mean training loss is compared with the spread of the built-in engine's over
three seeds.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.ludwig
pytest.importorskip("ludwig")
pytest.importorskip("peft")

from ludwig_nb.config import load_config  # noqa: E402
from ludwig_nb.core import events as ev  # noqa: E402
from ludwig_nb.core.control import RunControl  # noqa: E402
from ludwig_nb.engines.base import TrainJob  # noqa: E402
from ludwig_nb.engines.registry import get_engine  # noqa: E402
from tests.fixtures.llm.tiny import sentiment_frame  # noqa: E402


def _config(base: Path, **extra: Any) -> dict[str, Any]:
    return load_config(
        {
            "model_type": "llm",
            "base_model": str(base),
            # fill_value "": Ludwig 0.11's text input cannot predict without it
            "input_features": [
                {"name": "review", "type": "text", "preprocessing": {"fill_value": ""}}
            ],
            "output_features": [{"name": "label", "type": "text"}],
            "prompt": {"template": "Review: {review}\nSentiment:"},
            # greedy: the Ludwig engine clears the sampling-only settings for Ludwig 0.11
            "generation": {"max_new_tokens": 4, "do_sample": False},
            "trainer": {
                "type": "finetune",
                "epochs": 1,
                "batch_size": 16,
                "eval_batch_size": 32,
                "learning_rate": 0.003,
                "optimizer": {"type": "adamw"},
            },
            **extra,
        }
    ).to_dict()


def _fit(engine: str, config: dict[str, Any], data: Any, run_dir: Path, seed: int):
    events: list[ev.Event] = []
    impl = get_engine(engine)
    job = TrainJob(
        config=config,
        dataset=impl.prepare_data(config, data),
        run_dir=run_dir,
        run_id=f"{engine}-{seed}",
        name=engine,
        seed=seed,
        threads=1,
    )
    impl.fit(job, events.append, RunControl())
    return events


def _epoch_loss(events: list[ev.Event]) -> float:
    losses = [e.loss for e in events if isinstance(e, ev.StepFinished) and e.loss is not None]
    assert losses, "no step reported its loss"
    return statistics.fmean(losses)


@pytest.fixture(scope="module")
def splits():
    frame = sentiment_frame(400, seed=5)
    return {"training": frame[:280], "validation": frame[280:320], "test": frame[320:]}


@pytest.mark.parametrize("adapter", [None, {"type": "lora", "r": 8}], ids=["full", "lora"])
def test_ludwig_and_the_builtin_engine_lose_alike(tiny_llm, splits, tmp_path, adapter):
    extra = {"adapter": adapter} if adapter else {}
    config = _config(tiny_llm("llama"), **extra)
    ours = [
        _epoch_loss(_fit("builtin", config, splits, tmp_path / f"b{seed}", seed))
        for seed in (1, 2, 3)
    ]
    theirs_events = _fit("ludwig", config, splits, tmp_path / "ludwig", 42)
    assert theirs_events[-1].type == "run_finished", theirs_events[-1]
    theirs = _epoch_loss(theirs_events)
    mean, spread = statistics.fmean(ours), statistics.pstdev(ours)
    print(
        f"epoch mean loss: builtin {ours} (mean {mean:.4f}, sd {spread:.4f}); ludwig {theirs:.4f}"
    )
    assert abs(theirs - mean) <= max(3 * spread, 0.05 * mean), (ours, theirs)
