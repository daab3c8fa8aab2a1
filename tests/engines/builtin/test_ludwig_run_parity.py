"""From the same start, the built-in engine's run trains the model Ludwig 0.11's run trains.

The model test shows both engines build the same network, and the training test that each loss,
optimizer and schedule is Ludwig's. This one runs both trainers whole: Ludwig trains a config
with ``LudwigModel.train``; the built-in engine trains the same config through
``ludwig_nb.runs.train``, its model starting from the weights Ludwig's run started from. Each
epoch both take the same rows in the same batches (Ludwig's sampler's order), evaluate, keep
their best checkpoint and restore it; at the end both predict the same rows, and the
probabilities (or numbers) agree to float error. The seeds draw different initial weights in
the two engines, so this is the test that tells their training apart from their seed streams.

The validation and test splits are copies of the training rows, and the numbers are min-max
scaled, so that preprocessing fitted on the training split (the built-in engine) and on the
whole dataset (Ludwig) give the same vocabularies and scales. Each split fits one evaluation
batch: Ludwig's validation loss is the mean of its batches' means, which weighs a short last
batch as much as a full one, where the built-in engine's is the mean over the rows. Runs in
the Ludwig env (``scripts/ci/test_ludwig.sh``).
"""

from __future__ import annotations

import copy
import json
import logging
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.ludwig
pytest.importorskip("ludwig", reason="needs the Ludwig env (scripts/setup/ludwig_env.sh)")

import torch  # noqa: E402

from benchmarks.ludwig_weights import copy_weights  # noqa: E402
from ludwig_nb.config import load_config  # noqa: E402
from ludwig_nb.core import events as ev  # noqa: E402
from ludwig_nb.engines.builtin import setup  # noqa: E402
from ludwig_nb.engines.builtin.device import batch_order  # noqa: E402
from ludwig_nb.engines.builtin.model import ECD  # noqa: E402

#: training rows: not a multiple of the batch size, and not one more (Ludwig drops a last batch
#: of one row)
ROWS = 150
_WORDS = ["red", "green", "blue", "amber", "violet", "grey", "black", "white"]


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    num = rng.normal(size=ROWS)
    cat = rng.choice(list("abcd"), size=ROWS)
    words = rng.choice(_WORDS, size=(ROWS, 6))
    lengths = rng.integers(1, 7, size=ROWS)
    signal = num + (cat == "a") - (cat == "c") + rng.normal(scale=0.5, size=ROWS)
    train = pd.DataFrame(
        {
            "num": num,
            "num2": rng.uniform(0, 10, size=ROWS),
            "cat": cat,
            "bin": rng.choice([True, False], size=ROWS),
            "text": [" ".join(w[:n]) for w, n in zip(words, lengths, strict=True)],
            "y_cat": np.where(signal > 0.7, "hi", np.where(signal < -0.7, "lo", "mid")),
            "y_bin": signal + 0.3 * (words[:, 0] == "red") > 0,
            "y_num": 3.0 * signal + 1.0,
        }
    )
    return pd.concat([train.assign(split=s) for s in (0, 1, 2)], ignore_index=True)


def _number(name: str) -> dict[str, Any]:
    return {"name": name, "type": "number", "preprocessing": {"normalization": "minmax"}}


#: config name -> (inputs, combiner, output, trainer): each a run both engines train whole
CASES: dict[str, tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "tabular-category": (
        [_number("num"), _number("num2"), {"name": "cat", "type": "category"}],
        {"type": "concat", "num_fc_layers": 1, "output_size": 16},
        {"name": "y_cat", "type": "category"},
        {"epochs": 6, "learning_rate": 0.01},
    ),
    "text-binary": (
        [{"name": "text", "type": "text"}, _number("num"), {"name": "bin", "type": "binary"}],
        {"type": "concat"},
        {"name": "y_bin", "type": "binary"},
        {"epochs": 4},
    ),
    "number-early-stop": (
        [_number("num"), {"name": "cat", "type": "category"}],
        {"type": "concat"},
        {"name": "y_num", "type": "number", "decoder": {"num_fc_layers": 1}},
        {"epochs": 12, "learning_rate": 0.05, "early_stop": 2},  # stops after 7 evaluations
    ),
}


def _config(name: str) -> dict[str, Any]:
    inputs, combiner, output, trainer = CASES[name]
    return {
        "input_features": copy.deepcopy(inputs),
        "combiner": dict(combiner),
        "output_features": [copy.deepcopy(output)],
        "preprocessing": {"split": {"type": "fixed", "column": "split"}},
        "trainer": {"batch_size": 32, "eval_batch_size": 256, **trainer},
    }


def _ludwig_run(config: dict[str, Any], frame: pd.DataFrame, seed: int, out: Path) -> Any:
    from ludwig.api import LudwigModel

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LudwigModel(copy.deepcopy(config), backend="local", logging_level=logging.ERROR)
        model.train(
            dataset=frame,
            random_seed=seed,
            output_directory=str(out),
            skip_save_processed_input=True,
        )
    return model


def _compared(output: dict[str, Any], predictions: pd.DataFrame) -> pd.DataFrame:
    name = output["name"]
    if output["type"] == "number":
        return predictions[[f"{name}_predictions"]].astype(float)
    wanted = [f"{name}_probability"] + [
        c for c in predictions.columns if c.startswith(f"{name}_probabilities_")
    ]
    return predictions[[c for c in wanted if c in predictions.columns]].astype(float)


@pytest.mark.parametrize("name", list(CASES))
def test_the_same_start_trains_the_same_model(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ludwig.api import LudwigModel

    from ludwig_nb.runs import train

    config, frame, seed = _config(name), _frame(), 17
    ludwig = _ludwig_run(config, frame, seed, tmp_path / "ludwig")
    start = LudwigModel.create_model(ludwig.config_obj, random_seed=seed)
    rendered = load_config(config).to_dict()
    build = setup._build_module

    def from_ludwigs_start(cfg: dict[str, Any], metadata: dict[str, Any], s: int) -> ECD:
        module = build(cfg, metadata, s)
        copy_weights(rendered, metadata, ludwig.training_set_metadata, start, module)
        return module

    monkeypatch.setattr(setup, "_build_module", from_ludwigs_start)
    run = train(
        config,
        frame,
        name=name,
        random_seed=seed,
        results_dir=tmp_path / "runs",
        registry_dir=tmp_path / "registry",
        wait=True,
    )
    assert run.status == "completed", run.state.error
    rows = frame[frame["split"] == 2].drop(columns=[config["output_features"][0]["name"]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, _ = ludwig.predict(rows)
    ours = run.model.predict(rows)
    output = config["output_features"][0]
    expected, got = _compared(output, theirs), _compared(output, ours)
    assert list(got.columns) == list(expected.columns)
    np.testing.assert_allclose(
        got.to_numpy(), expected.to_numpy(), rtol=1e-4, atol=1e-4, err_msg=name
    )
    # both evaluated as often, on the same losses, and the model moved from its start
    ours_losses = [
        e.metrics["validation"]["combined"]["loss"]
        for e in run.events
        if isinstance(e, ev.EvaluationFinished)
    ]
    theirs_losses = _ludwig_losses(tmp_path / "ludwig")
    assert len(ours_losses) == len(theirs_losses), name  # the same early stop, if any
    np.testing.assert_allclose(ours_losses, theirs_losses, rtol=1e-3, err_msg=name)
    assert ours_losses[-1] < 0.9 * ours_losses[0]


def _ludwig_losses(out: Path) -> list[float]:
    """The combined validation loss at each of Ludwig's evaluations."""
    stats = json.loads(next(out.rglob("training_statistics.json")).read_text())
    return [float(x) for x in stats["validation"]["combined"]["loss"]]


@pytest.mark.parametrize("seed", [0, 42, 1234])
@pytest.mark.parametrize("rows", [1, 31, 150])
def test_same_batch_order_as_ludwigs_sampler(seed: int, rows: int) -> None:
    from ludwig.data.sampler import DistributedSampler

    sampler = DistributedSampler(rows, shuffle=True, random_seed=seed, distributed=None)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        assert batch_order(rows, seed, epoch, True).tolist() == list(iter(sampler))
    assert torch.equal(batch_order(rows, seed, 0, False), torch.arange(rows))
