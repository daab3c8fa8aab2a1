"""Shared fixtures for the config tests: example configs and a minimal valid config."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ludwig_nb.config import ConfigError, load_config

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "configs"

#: a minimal valid config; line numbers in tests refer to it
MINIMAL = """\
input_features:
  - name: x
    type: number
output_features:
  - name: y
    type: binary
"""


@pytest.fixture
def minimal() -> str:
    return MINIMAL


@pytest.fixture
def example_text() -> Callable[[str], str]:
    """The text of a fixture config by file stem (``"titanic"``)."""

    def read(stem: str) -> str:
        return (CONFIGS / f"{stem}.yaml").read_text()

    return read


@pytest.fixture
def fail() -> Callable[..., ConfigError]:
    """Load a config that must fail; return the ConfigError."""

    def run(source: object, **kwargs: object) -> ConfigError:
        with pytest.raises(ConfigError) as info:
            load_config(source, **kwargs)  # type: ignore[arg-type]
        return info.value

    return run
