"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_llm(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``tiny_llm(arch)``: the folder of a tiny offline causal LM of that architecture.

    Built once per test session and architecture (``tests/fixtures/llm/tiny.py``); skips the
    test when the ``[llm]`` extra (transformers, tokenizers) is not installed. Treat the
    folder as read-only: other tests share it.
    """
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from tests.fixtures.llm.tiny import build_tiny_llm

    built: dict[str, Path] = {}

    def get(arch: str = "llama") -> Path:
        if arch not in built:
            built[arch] = build_tiny_llm(tmp_path_factory.mktemp(f"tiny-{arch}"), arch)
        return built[arch]

    return get
