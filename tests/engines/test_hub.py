"""An LLM whose weights cannot be had fails in seconds with a message that says so."""

from __future__ import annotations

import socket

import pytest

from ludwig_nb.engines.hub import check_base_model


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed once the block ends: connecting is refused


def test_a_local_folder_is_enough(tmp_path):
    check_base_model(str(tmp_path))


def test_an_unreachable_hub_is_named(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with pytest.raises(RuntimeError) as info:
        check_base_model("org/absent", timeout_s=1.0)
    assert "weights of base_model 'org/absent' cannot be fetched" in str(info.value)
    assert "127.0.0.1 is unreachable (Connection refused)" in str(info.value)


def test_offline_mode_is_named(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RuntimeError, match="HF_HUB_OFFLINE"):
        check_base_model("org/absent")


def test_no_base_model():
    with pytest.raises(RuntimeError, match="needs base_model"):
        check_base_model("")
