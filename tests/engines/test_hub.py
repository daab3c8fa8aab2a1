"""An LLM whose weights cannot be had fails in seconds with a message that says so."""

from __future__ import annotations

import socket

import pytest

from ludwig_nb.engines.base import EngineUnavailable
from ludwig_nb.engines.hub import BaseModelUnavailable, check_base_model


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed once the block ends: connecting is refused


def test_a_local_folder_is_enough(tmp_path):
    check_base_model(str(tmp_path))


def test_an_unreachable_hub_is_named(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with pytest.raises(BaseModelUnavailable) as info:
        check_base_model("org/absent", timeout_s=1.0)
    assert "weights of base_model 'org/absent' cannot be fetched" in str(info.value)
    assert "127.0.0.1 is unreachable (Connection refused)" in str(info.value)


def test_offline_mode_is_named(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BaseModelUnavailable, match="HF_HUB_OFFLINE"):
        check_base_model("org/absent")


def test_no_base_model():
    with pytest.raises(BaseModelUnavailable, match="needs base_model"):
        check_base_model("")


def test_the_error_is_one_every_front_end_shows_as_a_message():
    assert issubclass(BaseModelUnavailable, EngineUnavailable)  # CLI: exit 2; magics: a line


LLM_CONFIG = """\
model_type: llm
base_model: ludwig-nb-tests/no-such-model
input_features: [{name: question, type: text}]
output_features: [{name: answer, type: text}]
"""


def test_train_reports_a_missing_model_before_the_data_and_leaves_nothing(tmp_path, monkeypatch):
    """Two rows would leave the validation split empty: the model is named first."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("peft", reason="the built-in LLM engine needs the [llm] extra")
    from ludwig_nb import train

    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    data = pd.DataFrame({"question": ["a?", "b?"], "answer": ["a", "b"]})
    with pytest.raises(BaseModelUnavailable, match="'ludwig-nb-tests/no-such-model' cannot be"):
        train(
            LLM_CONFIG,
            data,
            name="llm",
            engine="builtin",
            results_dir=tmp_path / "results",
            registry_dir=tmp_path / "registry",
        )
    assert not list((tmp_path / "results").glob("*"))  # no run directory left behind
