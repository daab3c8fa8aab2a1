"""An LLM run's data: checked before the thread, split and tokenized on it.

The table(s) load and split exactly as every run's (``ludwig_nb.data``: same split function,
same seed, so the run layer's baseline scores the same rows); the prompt's columns are
checked before the thread starts. Missing text is the empty string (Ludwig needs
``fill_value: ""`` for that).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin.llm.prompts import build_prompts, check_template
from ludwig_nb.engines.builtin.llm.tokens import Encoded, encode_rows, length_limits

__all__ = ["SplitText", "check_llm_data", "input_name", "output_name", "split_frames", "texts"]


def input_name(config: Mapping[str, Any]) -> str:
    """The column of the (one) input feature."""
    feature = config["input_features"][0]
    return str(feature.get("column") or feature["name"])


def output_name(config: Mapping[str, Any]) -> str:
    """The column of the (one) output feature."""
    feature = config["output_features"][0]
    return str(feature.get("column") or feature["name"])


def check_llm_data(config: Mapping[str, Any], dataset: Any, *, outputs: bool = True) -> Any:
    """Load ``dataset`` and check it against the LLM ``config``; returns the loaded data.

    Raises ``DataError`` naming the file/split and the column: a feature column missing, a
    template column missing, or (``outputs``: data to train on) a split that would be empty.
    """
    from ludwig_nb.data import load_dataset
    from ludwig_nb.data.sources import missing_column
    from ludwig_nb.data.splits import split_dataset

    loaded = load_dataset(dataset)
    frames = loaded if isinstance(loaded, dict) else {"": loaded}
    for split, frame in frames.items():
        where = f"the {split} split" if split else "the dataset"
        columns = [str(c) for c in frame.columns]
        error = missing_column(config, columns, where, outputs)
        if error is not None:
            raise error
        try:
            check_template(config.get("prompt") or {}, input_name(config), columns)
        except ValueError as err:
            raise DataError(f"{where}: {err}") from None
    if outputs and not isinstance(loaded, dict):
        split_dataset(loaded, config.get("preprocessing") or {}, seed=0)  # empty splits
    return loaded


def split_frames(config: Mapping[str, Any], loaded: Any, seed: int) -> dict[str, pd.DataFrame]:
    """``{split: frame}``: the given splits, or one table cut as every run cuts it."""
    from ludwig_nb.data.splits import sample_rows, split_dataset

    if isinstance(loaded, dict):
        pre = config.get("preprocessing") or {}
        return {
            name: (sample_rows(frame, pre, seed) if name == "training" else frame).reset_index(
                drop=True
            )
            for name, frame in loaded.items()
            if frame is not None
        }
    return split_dataset(loaded, config.get("preprocessing") or {}, seed)


@dataclasses.dataclass(frozen=True)
class SplitText:
    """One split as text and tokens: prompts, expected answers, and the encoded rows."""

    prompts: list[str]
    targets: list[str] | None
    encoded: Encoded


def texts(
    config: Mapping[str, Any], frame: pd.DataFrame, tokenizer: Any, *, with_targets: bool = True
) -> SplitText:
    """Prompts (and targets) of ``frame``, tokenized with the config's length limits."""
    prompts = build_prompts(frame, config.get("prompt") or {}, input_name(config))
    targets = None
    if with_targets:
        column = frame[output_name(config)]
        targets = ["" if pd.isna(v) else str(v) for v in column]
    return SplitText(
        prompts, targets, encode_rows(tokenizer, prompts, targets, length_limits(config))
    )
