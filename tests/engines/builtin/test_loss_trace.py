"""Training results do not move when the engine is made faster: the same seed gives the
same per-step losses (and the same final evaluation) as the engine before the speed
work (issue 15), stored in tests/fixtures/engines/loss_traces.json.

The traces were written by the engine at commit 5b5d1ae (before the restructuring):
``python -m tests.engines.builtin.test_loss_trace`` rewrites them, which is only right
when a change is *meant* to alter training results. One was: ``tabtransformer_combiner``
was rewritten when dropout (attention weights included) moved to each run's own generator
(issue 11), so that runs training at once reproduce their solo losses. All were rewritten when
the built-in model became Ludwig 0.11's network layer for layer (initialisers, embedding sizes,
special symbols, the standard deviation of ``zscore``). The three cases with a ``pos``/``neg``
binary output were rewritten when two unconventional labels took Ludwig 0.11's meaning (the
first in sorted order, ``neg``, is true); the two without one did not move. All were rewritten
when each epoch's row order became Ludwig's sampler's (``RandomState(seed + epoch)``), so that the
same seed takes the same batches in both engines, and again when the model drew Ludwig's shape
probes (``seed_stream.py``), so that the same seed starts from Ludwig's weights, and again when
preprocessing was fitted on every split's rows and numbers normalised in float32, as Ludwig does.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from ludwig_nb.core.control import RunControl
from ludwig_nb.engines.base import TrainJob
from tests.engines.builtin.conftest import FAST, render, table

TRACES = Path(__file__).parents[2] / "fixtures" / "engines" / "loss_traces.json"

#: name -> (inputs, outputs, trainer overrides); the number inputs are interleaved with
#: others so that stacking them into one tensor must keep the concat order
CASES: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]] = {
    "numbers_to_binary": (
        [{"name": "x", "type": "number"}, {"name": "target", "type": "number"}],
        [{"name": "label", "type": "binary"}],
        {},
    ),
    "mixed_tabular": (
        [
            {"name": "x", "type": "number"},
            {"name": "colour", "type": "category"},
            {"name": "target", "type": "number"},
            {"name": "flag", "type": "binary"},
        ],
        [{"name": "label", "type": "binary"}],
        {"learning_rate": 0.003},
    ),
    "fc_combiner_regression": (
        [
            {"name": "x", "type": "number"},
            {"name": "flag", "type": "binary"},
            {"name": "colour", "type": "category", "encoder": {"type": "onehot"}},
        ],
        [{"name": "target", "type": "number"}],
        {"regularization_type": "l2", "regularization_lambda": 0.01},
    ),
    "dense_number_and_text": (
        [
            {"name": "x", "type": "number", "encoder": {"type": "dense", "output_size": 8}},
            {"name": "text", "type": "text", "encoder": {"type": "embed", "embedding_size": 8}},
        ],
        [{"name": "colour", "type": "category"}],
        {},
    ),
    "tabtransformer_combiner": (
        [
            {"name": "colour", "type": "category"},
            {"name": "x", "type": "number"},
            {"name": "flag", "type": "binary"},
        ],
        [{"name": "label", "type": "binary"}],
        {},
    ),
}
#: combiner settings per case (the rest use Ludwig's default concat)
COMBINERS = {
    "fc_combiner_regression": {"type": "concat", "num_fc_layers": 2, "output_size": 16},
    "tabtransformer_combiner": {
        "type": "tabtransformer",
        "hidden_size": 16,
        "num_heads": 2,
        "transformer_output_size": 16,
        "output_size": 16,
    },
}


def trace(name: str) -> dict[str, Any]:
    """Per-step losses and the last evaluation's validation metrics of one case."""
    from ludwig_nb.engines.builtin import BuiltinEngine

    inputs, outputs, trainer = CASES[name]
    combiner = {"combiner": COMBINERS[name]} if name in COMBINERS else {}  # Ludwig's default
    config = render(
        {
            "input_features": inputs,
            "output_features": outputs,
            **combiner,
            "trainer": {**FAST, "epochs": 5, **trainer},
        }
    )
    events: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        job = TrainJob(
            config=config, dataset=table(rows=120), run_dir=Path(tmp), run_id="r", name="t"
        )
        BuiltinEngine().fit(job, events.append, RunControl())
    losses = [e.loss for e in events if e.type == "step_finished"]
    last = [e for e in events if e.type == "evaluation_finished"][-1]
    return {"losses": losses, "validation": last.metrics.get("validation", {})}


@pytest.fixture(scope="module")
def stored() -> dict[str, Any]:
    return json.loads(TRACES.read_text())


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_seed_gives_the_pre_change_losses(name, stored):
    got, want = trace(name), stored[name]
    assert len(got["losses"]) == len(want["losses"])
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-4, atol=1e-6)
    for feature, metrics in want["validation"].items():
        for metric, value in metrics.items():
            assert got["validation"][feature][metric] == pytest.approx(value, rel=1e-4, abs=1e-6)


if __name__ == "__main__":
    torch.set_num_threads(1)
    TRACES.write_text(json.dumps({name: trace(name) for name in CASES}, indent=1) + "\n")
    sys.stdout.write(f"wrote {TRACES}\n")
