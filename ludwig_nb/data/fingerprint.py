"""A read dataset's content fingerprint: the same rows give the same text, however named.

A run records it when its dataset has been read (``DataProgress`` "read", events.jsonl), so
that ``compare`` tells two runs' data apart by content, not by how each named it (``x.csv``,
``./x.csv``, a symlink, a copy elsewhere, the same table passed as a DataFrame).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

__all__ = ["FINGERPRINT_CHARS", "table_fingerprint"]

#: hex characters kept of the SHA-256 (64 bits: no two real datasets meet by chance)
FINGERPRINT_CHARS = 16


def table_fingerprint(data: Any) -> str:
    """The fingerprint of a pandas table or a mapping of split name -> table; "" otherwise.

    SHA-256 over the column names and pandas' per-row hashes of the values (the index left
    out), in column and row order; a mapping hashes its splits in name order. So a CSV and
    the DataFrame it reads into agree, while a changed value, row, column name or column
    order gives another fingerprint. Never raises: data it cannot hash gives "".
    """
    digest = hashlib.sha256()
    try:
        if isinstance(data, Mapping):
            if not data:
                return ""
            for name in sorted(data, key=str):
                digest.update(f"split:{name}\n".encode())
                if not _add_table(digest, data[name]):
                    return ""
        elif not _add_table(digest, data):
            return ""
    except (TypeError, ValueError):  # unhashable cells (lists, dicts): no fingerprint
        return ""
    return digest.hexdigest()[:FINGERPRINT_CHARS]


def _add_table(digest: Any, table: Any) -> bool:
    """Feed ``table`` to ``digest``; False when it is not a pandas DataFrame."""
    import pandas as pd

    if not isinstance(table, pd.DataFrame):
        return False
    digest.update("\x1f".join(map(str, table.columns)).encode() + b"\n")
    rows = pd.util.hash_pandas_object(table, index=False)
    digest.update(rows.to_numpy().tobytes())
    return True
