"""Saving a trained model and loading it in a fresh process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from ludwig_nb.data import DataError
from ludwig_nb.engines.builtin import load_model
from tests.engines.builtin.conftest import make_config, table


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from ludwig_nb.core.control import RunControl
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.engines.builtin import BuiltinEngine

    config = make_config(
        [
            {"name": "x", "type": "number"},
            {"name": "colour", "type": "category", "encoder": {"embedding_size": 4}},
            {"name": "text", "type": "text", "encoder": {"type": "embed", "embedding_size": 4}},
        ],
        [{"name": "label", "type": "category"}, {"name": "target", "type": "number"}],
    )
    run_dir = tmp_path_factory.mktemp("run")
    job = TrainJob(config, table(rows=64), run_dir, "r", "t")
    return BuiltinEngine().fit(job, lambda e: None, RunControl()), run_dir


def test_saved_model_predicts_the_same_in_a_fresh_process(trained, tmp_path):
    model, run_dir = trained
    data = table(rows=12, seed=9)
    data.loc[0, "colour"] = "purple"  # unseen category -> <UNK>
    data.to_csv(tmp_path / "data.csv", index=False)
    expected = model.predict(data)
    script = textwrap.dedent(
        f"""
        from ludwig_nb.engines.builtin import load_model
        model = load_model({str(run_dir / "model")!r}, device="cpu")
        model.predict({str(tmp_path / "data.csv")!r}).to_pickle({str(tmp_path / "out.pkl")!r})
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    got = pd.read_pickle(tmp_path / "out.pkl")
    assert list(got["label_predictions"]) == list(expected["label_predictions"])
    pd.testing.assert_series_equal(
        got["target_predictions"], expected["target_predictions"], rtol=1e-5
    )
    pd.testing.assert_series_equal(
        got["label_probability"], expected["label_probability"], rtol=1e-5
    )


def test_save_then_load_round_trips_evaluate(trained, tmp_path):
    model, _ = trained
    data = table(rows=30, seed=4)
    again = load_model(model.save(tmp_path / "copy"))
    before, after = model.evaluate(data), again.evaluate(data)
    assert set(before) == set(after) == {"combined", "label", "target"}
    for feature, metrics in before.items():
        assert after[feature] == pytest.approx(metrics, rel=1e-5)


def test_predict_names_a_missing_column(trained):
    model, _ = trained
    with pytest.raises(DataError, match="'colour'"):
        model.predict(table(rows=3).drop(columns=["colour"]))


def test_load_model_reports_a_directory_that_is_not_a_model(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a saved model"):
        load_model(tmp_path)
