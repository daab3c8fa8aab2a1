"""Strict JSON: never NaN/Infinity on disk, and the places that were non-finite listed."""

import json
import math

import numpy as np

from ludwig_nb.core import strict_json
from ludwig_nb.core.strict_json import NONFINITE_KEY, clean, dumps, flagged


def test_clean_replaces_non_finite_numbers_and_lists_where_they_were():
    data = {"loss": math.nan, "metrics": {"y": [1.0, math.inf, -math.inf]}, "ok": 2.5}
    cleaned, found = clean(data)
    assert cleaned == {"loss": None, "metrics": {"y": [1.0, None, None]}, "ok": 2.5}
    assert found == ["loss", "metrics.y.1", "metrics.y.2"]
    assert math.isnan(data["loss"])  # the input is not changed


def test_numpy_scalars_become_python_numbers():
    cleaned, found = clean({"a": np.float32(0.5), "b": np.int64(3), "c": np.float64("nan")})
    assert cleaned == {"a": 0.5, "b": 3, "c": None} and found == ["c"]
    assert type(cleaned["a"]) is float and type(cleaned["b"]) is int
    assert json.loads(dumps({"a": np.float32(0.5)})) == {"a": 0.5}


def test_a_rewritten_document_keeps_the_paths_flagged_earlier():
    first = flagged({"loss": math.nan, "acc": 0.9})
    assert first[NONFINITE_KEY] == ["loss"]
    # later the value was already null (read back from disk), another one is non-finite now
    again = flagged({"loss": None, "acc": math.inf, NONFINITE_KEY: first[NONFINITE_KEY]})
    assert again[NONFINITE_KEY] == ["loss", "acc"]
    assert NONFINITE_KEY not in flagged({"acc": 0.9})


def test_dumps_never_writes_nan_or_infinity():
    text = dumps({"x": [math.nan, math.inf, 1.0], "when": strict_json})
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["x"] == [None, None, 1.0]
