"""Every input feature type and encoder, every combiner and output type trains on small data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.engines.builtin.conftest import make_config, table

ENCODER_PARAMS = {
    "embed": {"embedding_size": 8},
    "parallel_cnn": {"embedding_size": 8, "num_filters": 4, "fc_layers": [{"output_size": 8}]},
    "rnn": {"embedding_size": 8, "state_size": 8, "cell_type": "gru"},
    "transformer": {
        "embedding_size": 8,
        "hidden_size": 8,
        "num_heads": 2,
        "transformer_output_size": 8,
    },
    "dense": {"output_size": 8},
}

ENCODER_CASES = [
    ("x", "number", "passthrough"),
    ("x", "number", "dense"),
    ("flag", "binary", "passthrough"),
    ("flag", "binary", "dense"),
    ("colour", "category", "dense"),
    ("colour", "category", "onehot"),
    ("text", "text", "embed"),
    ("text", "text", "parallel_cnn"),
    ("text", "text", "rnn"),
    ("text", "text", "transformer"),
    ("seq", "sequence", "embed"),
    ("seq", "sequence", "rnn"),
    ("items", "set", "embed"),
    ("items", "bag", "embed"),
    ("vec", "vector", "dense"),
    ("vec", "vector", "passthrough"),
    ("when", "date", "embed"),
]


def _encoder(kind: str, name: str) -> dict:
    if kind in ("category", "set", "bag", "date") and name != "onehot":
        return {"type": name, "embedding_size": 8}
    return {"type": name, **ENCODER_PARAMS.get(name, {})}


@pytest.mark.parametrize(("column", "kind", "encoder"), ENCODER_CASES)
def test_each_encoder_trains(run_engine, column, kind, encoder):
    config = make_config(
        [{"name": column, "type": kind, "encoder": _encoder(kind, encoder)}],
        [{"name": "label", "type": "binary"}],
        epochs=1,
    )
    result = run_engine(config, table(rows=48))
    losses = [s.loss for s in result.of("step_finished")]
    assert losses and all(math.isfinite(v) for v in losses)
    assert result.of("run_finished")[0].status == "completed"
    assert len(result.model.predict(table(rows=5, seed=3))) == 5


@pytest.mark.parametrize("combiner", ["concat", "transformer", "tabtransformer"])
def test_each_combiner_trains(run_engine, combiner):
    params = {"type": combiner}
    if combiner != "concat":
        params.update(hidden_size=8, num_heads=2, transformer_output_size=8, output_size=8)
    else:
        params.update(num_fc_layers=1, output_size=8, norm="batch", residual=True, dropout=0.1)
    config = make_config(
        [
            {"name": "x", "type": "number"},
            {"name": "colour", "type": "category", "encoder": {"embedding_size": 8}},
        ],
        [{"name": "label", "type": "binary"}],
        epochs=1,
    )
    config["combiner"] = {**config["combiner"], **params}
    result = run_engine(config, table(rows=48))
    assert result.of("run_finished")[0].status == "completed"


def test_every_output_type_in_one_model(run_engine):
    config = make_config(
        [{"name": "x", "type": "number"}],
        [
            {"name": "label", "type": "category"},
            {"name": "flag", "type": "binary"},
            {"name": "target", "type": "number"},
            {"name": "tags", "type": "set"},
            {"name": "vec_out", "type": "vector"},
        ],
        epochs=1,
    )
    result = run_engine(config, table(rows=48))
    metrics = result.of("evaluation_finished")[-1].metrics["test"]
    assert {"accuracy"} <= set(metrics["label"])
    assert {"roc_auc", "precision", "recall", "f1"} <= set(metrics["flag"])
    assert {"mean_squared_error", "mean_absolute_error", "r2"} <= set(metrics["target"])
    assert "jaccard" in metrics["tags"]
    assert "mean_squared_error" in metrics["vec_out"]
    predicted = result.model.predict(table(rows=4, seed=5))
    expected = {
        "label_predictions",
        "label_probabilities",
        "label_probability",
        "label_probabilities_pos",
        "flag_predictions",
        "flag_probability",
        "flag_probabilities_yes",
        "target_predictions",
        "tags_predictions",
        "vec_out_predictions",
    }
    assert expected <= set(predicted.columns)
    assert set(predicted["flag_predictions"]) <= {"yes", "no"}
    assert all(len(v) == 2 for v in predicted["vec_out_predictions"])


def test_logistic_regression_config_reaches_sklearn_quality(run_engine):
    """number passthrough + concat with 0 fc layers is a logistic regression."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(1)
    frame = table(rows=600, seed=1)
    frame["z"] = rng.normal(size=len(frame))
    frame["label"] = np.where(frame["x"] - 0.5 * frame["z"] + rng.normal(0, 0.5, 600) > 0, 1, 0)
    config = make_config(
        [{"name": "x", "type": "number"}, {"name": "z", "type": "number"}],
        [{"name": "label", "type": "binary"}],
        epochs=15,
        batch_size=32,
        learning_rate=0.05,
    )
    result = run_engine(config, frame)
    train = frame.iloc[:420]
    test = frame.iloc[420:]
    baseline = LogisticRegression().fit(train[["x", "z"]], train["label"])
    ours = result.model.evaluate(test)["label"]["accuracy"]
    assert ours >= baseline.score(test[["x", "z"]], test["label"]) - 0.03


def test_owned_attention_is_torchs_attention_without_dropout_and_reproducible_with_it():
    import torch
    from torch import nn

    from ludwig_nb.engines.builtin.dropout import OwnedAttention, own_dropout

    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.5, batch_first=True)
    x = torch.randn(3, 5, 8)
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 5])
    layer.train()
    owned = OwnedAttention.owning(layer.self_attn, torch.Generator().manual_seed(1))
    owned.attn_dropout.p = 0.0  # its own path, with no dropout drawn
    layer.self_attn.dropout = 0.0  # torch's path, with no dropout
    want = layer.self_attn(x, x, x, key_padding_mask=pad, need_weights=False)[0]
    got = owned(x, x, x, key_padding_mask=pad, need_weights=False)[0]
    np.testing.assert_allclose(got.detach(), want.detach(), rtol=1e-5, atol=1e-6)
    layer.self_attn.dropout = 0.5

    def outputs(seed: int) -> torch.Tensor:
        copy = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.5, batch_first=True)
        copy.load_state_dict(layer.state_dict())
        assert own_dropout(copy, torch.Generator().manual_seed(seed)) == 4  # 3 dropouts + attention
        assert isinstance(copy.self_attn, OwnedAttention)
        copy.train()
        torch.manual_seed(123)  # the global generator is not what the masks come from
        first = copy(x, src_key_padding_mask=pad)
        torch.manual_seed(456)
        return torch.stack([first, copy(x, src_key_padding_mask=pad)])

    assert torch.equal(outputs(7), outputs(7))
    assert not torch.equal(outputs(7), outputs(8))
