"""Property tests: mutate valid configs; only ConfigError may escape, and it points into the text.

Mutations: delete a key or list item, rename a key (typo or random), change a value's type,
swap a value for another enum value. A mutated config that still loads must render stably.
"""

from __future__ import annotations

import copy
import string
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ludwig_nb.config import ConfigError, load_config
from ludwig_nb.engines.builtin.capabilities import check_builtin

# A mutated config that loads may well earn a ConfigWarning (a key Ludwig ignores, old syntax);
# these tests check only what may be raised.
IGNORE_CONFIG_WARNINGS = pytest.mark.filterwarnings("ignore::ludwig_nb.config.errors.ConfigWarning")

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "configs"
EXAMPLES = [p.read_text() for p in sorted(CONFIGS.glob("*.yaml"))]

#: enum values from all over the schema, so that swaps land on real names too
VOCAB = [
    "number",
    "binary",
    "category",
    "text",
    "set",
    "bag",
    "date",
    "vector",
    "sequence",
    "image",
    "audio",
    "h3",
    "timeseries",
    "dense",
    "embed",
    "onehot",
    "passthrough",
    "rnn",
    "parallel_cnn",
    "transformer",
    "bert",
    "adam",
    "adamw",
    "sgd",
    "lbfgs",
    "random",
    "fixed",
    "stratify",
    "hash",
    "zscore",
    "minmax",
    "fill_with_mean",
    "drop_row",
    "concat",
    "tabnet",
    "tabtransformer",
    "auto",
    "cosine",
    "lstm",
    "gru",
    "huber",
    "softmax_cross_entropy",
    "roc_auc",
    "accuracy",
    "loss",
    "combined",
    "slowdown-5",
    "pause",
    "temperature",
    "",
    "x",
]

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=10**13),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.sampled_from(VOCAB),
    st.lists(st.integers(min_value=-2, max_value=5), max_size=3),
    st.dictionaries(st.sampled_from(["type", "name", "x"]), st.sampled_from(VOCAB), max_size=2),
)
KEYS = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12)

Path_ = tuple[Any, ...]


def _paths(node: Any, prefix: Path_ = ()) -> list[Path_]:
    out: list[Path_] = []
    items = (
        node.items()
        if isinstance(node, dict)
        else (enumerate(node) if isinstance(node, list) else [])
    )
    for key, child in items:
        out.append((*prefix, key))
        out.extend(_paths(child, (*prefix, key)))
    return out


def _parent(data: Any, path: Path_) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


def _typo(word: str, i: int) -> str:
    i %= max(len(word), 1)
    return word[:i] + word[i + 1 :] if len(word) > 1 else word + "x"


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    data = yaml.safe_load(draw(st.sampled_from(EXAMPLES)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(data)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _parent(data, path), path[-1]
        kind = draw(st.sampled_from(["delete", "rename", "retype", "swap"]))
        if kind == "delete":
            del parent[key]
        elif kind == "rename" and isinstance(parent, dict):
            new = _typo(key, draw(st.integers(0, 20))) if draw(st.booleans()) else draw(KEYS)
            parent[new] = parent.pop(key)
        elif kind == "swap":
            parent[key] = draw(st.sampled_from(VOCAB))
        else:
            parent[key] = draw(VALUES)
    return data


def _check_located(err: ConfigError, text: str | None) -> None:
    lines = text.splitlines() if text is not None else []
    assert err.errors, "an error lists its problems"
    for problem in err.errors:
        assert isinstance(problem, ConfigError)
        if text is None:
            assert problem.line is None
            continue
        assert (problem.line is None) == (problem.column is None)
        if problem.line is not None:
            assert 1 <= problem.line <= len(lines)
            assert problem.column is not None and problem.column >= 1
            assert problem.source_line == lines[problem.line - 1]
    rendered = str(err)
    assert "Traceback" not in rendered


def _load_or_locate(source: Any, engine: str | None, text: str | None) -> None:
    try:
        cfg = load_config(source)
        if engine == "builtin":
            check_builtin(cfg)
    except ConfigError as err:
        _check_located(err, text)
    else:
        again = load_config(cfg.to_dict())
        assert again.to_dict() == cfg.to_dict()


@IGNORE_CONFIG_WARNINGS
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=mutated(), engine=st.sampled_from(["builtin", None]))
def test_mutated_yaml_only_raises_located_config_errors(
    data: dict[str, Any], engine: str | None
) -> None:
    text = yaml.safe_dump(data, sort_keys=False)
    _load_or_locate(text, engine, text)


@IGNORE_CONFIG_WARNINGS
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=mutated())
def test_mutated_dicts_only_raise_config_errors(data: dict[str, Any]) -> None:
    _load_or_locate(copy.deepcopy(data), None, None)


@IGNORE_CONFIG_WARNINGS
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base=st.sampled_from(EXAMPLES),
    at=st.integers(min_value=0, max_value=10_000),
    insert=st.sampled_from(
        [
            "\t",
            ":",
            "- ",
            "{",
            "]",
            "'",
            "\n  x: 1\n",
            "&a",
            "*a",
            "!!int ",
            "%",
            "\x00",
            "\n---\n",
            "? ",
            "@",
            "  ",
        ]
    ),
)
def test_damaged_text_only_raises_located_config_errors(base: str, at: int, insert: str) -> None:
    at %= len(base) + 1
    text = base[:at] + insert + base[at:]
    _load_or_locate(text, "builtin", text)
