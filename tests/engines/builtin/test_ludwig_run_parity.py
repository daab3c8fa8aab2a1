"""The same config and seed: the built-in engine's run trains the model Ludwig 0.11's run trains.

The model test shows both engines build the same network with the same initial weights for a
seed, and the training test that each loss, optimizer and schedule is Ludwig's. This one runs
both whole: Ludwig trains a config with ``LudwigModel.train``; the built-in engine trains the
same config and seed through ``ludwig_nb.runs.train``. Both fit the preprocessing on every split,
start from the same weights, take the same rows in the same batches each epoch (Ludwig's
sampler's order), evaluate, stop early, keep their best checkpoint and restore it; at the end both
predict the test rows, and the probabilities (or numbers) agree to float error.

Each split fits one evaluation batch: Ludwig's validation loss is the mean of its batches'
means, which weighs a short last batch as much as a full one, where the built-in engine's is the
mean over the rows. Runs in the Ludwig env (``scripts/ci/test_ludwig.sh``).
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

from ludwig_nb.core import events as ev  # noqa: E402
from ludwig_nb.engines.builtin.device import batch_order  # noqa: E402

#: training rows: not a multiple of the batch size, and not one more (Ludwig drops a last batch
#: of one row)
ROWS = 150
_WORDS = ["red", "green", "blue", "amber", "violet", "grey", "black", "white"]


def _frame() -> pd.DataFrame:
    """``ROWS`` training rows, then 60 validation and 60 test rows, all distinct."""
    rows = ROWS + 120
    rng = np.random.default_rng(5)
    num = rng.normal(size=rows)
    cat = rng.choice(list("abcd"), size=rows)
    words = rng.choice(_WORDS, size=(rows, 6))
    lengths = rng.integers(1, 7, size=rows)
    signal = num + (cat == "a") - (cat == "c") + rng.normal(scale=0.5, size=rows)
    return pd.DataFrame(
        {
            "num": num,
            "num2": rng.uniform(0, 10, size=rows),
            "cat": cat,
            "bin": rng.choice([True, False], size=rows),
            "text": [" ".join(w[:n]) for w, n in zip(words, lengths, strict=True)],
            "y_cat": np.where(signal > 0.7, "hi", np.where(signal < -0.7, "lo", "mid")),
            "y_bin": signal + 0.3 * (words[:, 0] == "red") > 0,
            "y_num": 3.0 * signal + 1.0,
            "split": rng.permutation([0] * ROWS + [1] * 60 + [2] * 60),
        }
    )


def _number(name: str, normalization: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name, "type": "number"}
    if normalization:
        spec["preprocessing"] = {"normalization": normalization}
    return spec


#: config name -> (inputs, combiner, output, trainer): each a run both engines train whole
CASES: dict[str, tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "tabular-category": (
        [_number("num"), _number("num2", "minmax"), {"name": "cat", "type": "category"}],
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
        {"epochs": 12, "learning_rate": 0.05, "early_stop": 2},
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


@pytest.mark.parametrize(("name", "seed"), [(n, 17 + i) for i, n in enumerate(CASES)])
def test_the_same_config_and_seed_train_the_same_model(
    name: str, seed: int, tmp_path: Path
) -> None:
    from ludwig_nb.runs import train

    config, frame = _config(name), _frame()
    ludwig = _ludwig_run(config, frame, seed, tmp_path / "ludwig")
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
    # both evaluated as often, on the same losses, and the model moved
    ours_losses = [
        e.metrics["validation"]["combined"]["loss"]
        for e in run.events
        if isinstance(e, ev.EvaluationFinished)
    ]
    theirs_losses = _ludwig_losses(tmp_path / "ludwig")
    assert len(ours_losses) == len(theirs_losses), name  # the same early stop, if any
    if "early_stop" in CASES[name][3]:  # that case does stop early, at the same evaluation
        assert len(ours_losses) < config["trainer"]["epochs"]
    np.testing.assert_allclose(ours_losses, theirs_losses, rtol=1e-3, err_msg=name)
    assert max(ours_losses) - min(ours_losses) > 0.05 * ours_losses[0]  # it trained


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
