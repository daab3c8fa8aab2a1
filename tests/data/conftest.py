"""Fixtures for the data layer: a small table and a config naming its columns."""

from __future__ import annotations

import pandas as pd
import pytest


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [22.0, 35.0, None, 58.0, 41.0, 30.0, 27.0, 64.0, 45.0, 50.0],
            "city": ["a", "b", "a", "c", "a", "b", "a", "a", "b", None],
            "member": ["yes", "no", "yes", "yes", "no", "no", "yes", "no", "yes", "no"],
            "label": [0, 1, 0, 1, 0, 1, 0, 1, 0, 1],
        }
    )


@pytest.fixture
def config() -> dict:
    return {
        "input_features": [
            {"name": "age", "type": "number"},
            {"name": "city", "type": "category"},
            {"name": "member", "type": "binary"},
        ],
        "output_features": [{"name": "label", "type": "binary"}],
    }
