"""Fixtures for the built-in engine: rendered configs, a small table of every feature
type with a learnable signal, and a runner that collects the events."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.config import load_config
from ludwig_nb.core.control import RunControl
from ludwig_nb.core.events import Event
from ludwig_nb.engines.base import TrainJob

#: trainer settings that keep a test run to a few steps
FAST = {"epochs": 2, "batch_size": 16, "eval_batch_size": 256, "learning_rate": 0.01}


def render(config: dict[str, Any]) -> dict[str, Any]:
    """The fully rendered Ludwig config, as the run layer passes it."""
    return load_config(config).to_dict()


def make_config(
    inputs: list[dict[str, Any]], outputs: list[dict[str, Any]], **trainer: Any
) -> dict[str, Any]:
    return render(
        {"input_features": inputs, "output_features": outputs, "trainer": {**FAST, **trainer}}
    )


def table(rows: int = 96, seed: int = 0) -> pd.DataFrame:
    """Every feature type; ``label`` / ``target`` / ``tags`` / ``vec_out`` depend on ``x``."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=rows)
    colour = rng.choice(["red", "green", "blue"], size=rows)
    words = np.where(x > 0, "good fine nice", "bad awful poor")
    return pd.DataFrame(
        {
            "x": x,
            "flag": np.where(x + rng.normal(scale=0.3, size=rows) > 0, "yes", "no"),
            "colour": colour,
            "text": [f"{w} item {c}" for w, c in zip(words, colour, strict=True)],
            "seq": [" ".join(rng.choice(list("abcd"), size=rng.integers(1, 6))) for _ in x],
            "items": [" ".join(sorted(set(rng.choice(list("pqrs"), size=2)))) for _ in x],
            "vec": [" ".join(f"{v:.3f}" for v in (xi, xi**2, 1.0)) for xi in x],
            "when": pd.date_range("2020-01-01", periods=rows, freq="37h").astype(str),
            "label": np.where(x > 0, "pos", "neg"),
            "target": 3.0 * x + 1.0,
            "tags": np.where(x > 0, "hi up", "lo"),
            "vec_out": [f"{xi:.3f} {-xi:.3f}" for xi in x],
        }
    )


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """Tiny models: one thread is faster, and two spin badly on a shared 2-core runner."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@dataclasses.dataclass
class Result:
    model: Any
    events: list[Event]
    run_dir: Path

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


@pytest.fixture
def run_engine(tmp_path: Path) -> Callable[..., Result]:
    """``run_engine(config, data, control=None, on_event=None, **job fields) -> Result``."""
    from ludwig_nb.engines.builtin import BuiltinEngine

    counter = iter(range(1000))

    def run(
        config: dict[str, Any],
        data: Any,
        control: RunControl | None = None,
        on_event: Callable[[Event], None] | None = None,
        **job: Any,
    ) -> Result:
        events: list[Event] = []

        def emit(event: Event) -> None:
            events.append(event)
            if on_event is not None:
                on_event(event)

        run_dir = job.pop("run_dir", tmp_path / f"run{next(counter)}")
        model = BuiltinEngine().fit(
            TrainJob(config=config, dataset=data, run_dir=run_dir, run_id="r", name="t", **job),
            emit,
            control or RunControl(),
        )
        return Result(model, events, run_dir)

    return run
