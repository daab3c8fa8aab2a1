"""Trainer options resolved before the first step: seed, batch size, learning rate,
device, precision, accumulation, regularisation."""

from __future__ import annotations

import pytest
import torch

from ludwig_nb.engines.base import DEFAULT_SEED, TrainJob, job_seed
from ludwig_nb.engines.builtin.device import Precision, resolve_device
from tests.engines.builtin.conftest import make_config, table

NUMBER_TO_BINARY = ([{"name": "x", "type": "number"}], [{"name": "label", "type": "binary"}])


def test_seed_comes_from_the_config_or_defaults_to_ludwigs(tmp_path):
    config = make_config(*NUMBER_TO_BINARY)
    assert job_seed(TrainJob(config, None, tmp_path, "r", "n")) == DEFAULT_SEED == 42
    assert job_seed(TrainJob({**config, "random_seed": 3}, None, tmp_path, "r", "n")) == 3


def test_batch_size_and_learning_rate_auto(run_engine):
    config = make_config(
        [{"name": "text", "type": "text", "encoder": {"type": "embed", "embedding_size": 4}}],
        [{"name": "label", "type": "binary"}],
        batch_size="auto",
        learning_rate="auto",
        epochs=1,
    )
    result = run_engine(config, table(rows=200))
    schedule = result.of("run_started")[0].schedule
    assert schedule.batch_size in (16, 32)  # capped at 20 % of the 140 training rows
    assert result.of("step_finished")[0].learning_rate == pytest.approx(1e-4)


def test_gradient_accumulation_steps_only_on_sync(run_engine):
    config = make_config(*NUMBER_TO_BINARY, epochs=1, gradient_accumulation_steps=2)
    result = run_engine(config, table(rows=80))
    assert len(result.of("step_finished")) == 4
    assert result.of("run_finished")[0].status == "completed"


def test_regularization_adds_to_the_loss(run_engine):
    plain = run_engine(make_config(*NUMBER_TO_BINARY), table(rows=80))
    config = make_config(*NUMBER_TO_BINARY, regularization_type="l2", regularization_lambda=1.0)
    penalised = run_engine(config, table(rows=80))
    assert penalised.of("step_finished")[0].loss > plain.of("step_finished")[0].loss


def test_evaluate_training_set_gives_full_training_metrics(run_engine):
    config = make_config(*NUMBER_TO_BINARY, evaluate_training_set=True)
    metrics = run_engine(config, table(rows=80)).of("evaluation_finished")[0].metrics
    assert "accuracy" in metrics["training"]["label"]
    lean = run_engine(make_config(*NUMBER_TO_BINARY), table(rows=80))
    assert set(lean.of("evaluation_finished")[0].metrics["training"]["label"]) == {"loss"}


def test_devices_and_mixed_precision_on_cpu():
    assert resolve_device("cpu") == torch.device("cpu")
    if not torch.cuda.is_available():
        assert resolve_device(None) == torch.device("cpu")
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda:1")
    precision = Precision(torch.device("cpu"), enabled=True)
    assert precision.dtype is None and precision.scaler is None  # documented no-op on CPU


def test_dict_of_splits_is_used_as_given(run_engine):
    frame = table(rows=80)
    data = {"training": frame.iloc[:48], "validation": frame.iloc[48:64], "test": frame.iloc[64:]}
    result = run_engine(make_config(*NUMBER_TO_BINARY, epochs=1), data)
    assert result.of("run_started")[0].schedule.steps_per_epoch == 3
    assert set(result.of("evaluation_finished")[0].metrics) == {"training", "validation", "test"}


def test_compile_wraps_the_training_module(run_engine, monkeypatch):
    """torch.compile itself costs ~30 s on 2 CPU cores: the seam is faked here."""
    compiled = []

    def fake_compile(module):
        compiled.append(module)
        return module

    monkeypatch.setattr(torch, "compile", fake_compile)
    result = run_engine(make_config(*NUMBER_TO_BINARY, compile=True, epochs=1), table(rows=80))
    assert len(compiled) == 1 and compiled[0] is result.model.module
