"""A table's content fingerprint: equal for the same rows however they arrive, else not."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ludwig_nb.data.fingerprint import FINGERPRINT_CHARS, table_fingerprint


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    a = rng.normal(size=50)
    return pd.DataFrame({"a": a, "b": rng.choice(["p", "q"], 50), "y": a > 0})


def test_a_csv_and_the_frame_it_was_written_from_agree(tmp_path):
    df = _table()
    df.to_csv(tmp_path / "x.csv", index=False)
    fingerprint = table_fingerprint(df)
    assert len(fingerprint) == FINGERPRINT_CHARS
    assert table_fingerprint(pd.read_csv(tmp_path / "x.csv")) == fingerprint
    assert table_fingerprint(df.set_index(df.index + 100)) == fingerprint  # index left out


def test_any_change_of_content_gives_another_fingerprint():
    df = _table()
    base = table_fingerprint(df)
    changed = df.copy()
    changed.loc[3, "a"] += 1e-9
    assert table_fingerprint(changed) != base
    assert table_fingerprint(df.iloc[:-1]) != base  # a row fewer
    assert table_fingerprint(df.rename(columns={"b": "c"})) != base
    assert table_fingerprint(df[["b", "a", "y"]]) != base  # column order
    assert table_fingerprint(df.iloc[::-1]) != base  # row order


def test_splits_hash_by_name_and_what_is_not_a_table_has_none():
    df = _table()
    splits = {"training": df.iloc[:40], "test": df.iloc[40:]}
    assert table_fingerprint(splits) == table_fingerprint(dict(reversed(splits.items())))
    assert table_fingerprint(splits) != table_fingerprint({"training": df})
    assert table_fingerprint("x.csv") == ""
    assert table_fingerprint({}) == ""
    assert table_fingerprint({"training": "x.csv"}) == ""
    assert table_fingerprint(pd.DataFrame({"a": [[1], [2]]})) == ""  # unhashable cells
