"""Write ludwig_nb/config/schema/ludwig_0_11.json: the facts of Ludwig's config schema.

Run in the Ludwig venv (scripts/setup/ludwig_env.sh), from the repo root:

    $(scripts/setup/ludwig_env.sh | tail -1)/bin/python scripts/build/ludwig_schema.py

Ludwig builds its JSON schema from its marshmallow classes at run time (``get_schema``). We keep
only what validates and renders (types, enums, bounds, defaults, required keys, whether unknown
keys are allowed, which ``type`` picks which variant), not the descriptions, and store repeated
subtrees once (``{"$r": n}`` points into ``shared``), so the file is small and loads fast.
"""

from __future__ import annotations

import json
import pathlib
import sys
from collections import Counter
from typing import Any

_KEEP = {
    "type",
    "properties",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "default",
    "items",
    "allOf",
    "anyOf",
    "oneOf",
    "if",
    "then",
    "additionalProperties",
    "required",
    "const",
    "minItems",
    "maxItems",
}
_NAMED = {"properties"}  # children are user keys, not schema words


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: ({kk: _strip(vv) for kk, vv in v.items()} if k in _NAMED else _strip(v))
            for k, v in node.items()
            if k in _KEEP
        }
    if isinstance(node, list):
        return [_strip(x) for x in node]
    return node


def _key(node: Any) -> str:
    return json.dumps(node, sort_keys=True, separators=(",", ":"))


def _dedupe(root: Any) -> tuple[Any, list[Any]]:
    counts: Counter[str] = Counter()

    def count(node: Any) -> None:
        if isinstance(node, dict):
            counts[_key(node)] += 1
            for k, v in node.items():
                if k in _NAMED:
                    for vv in v.values():
                        count(vv)
                else:
                    count(v)
        elif isinstance(node, list):
            for x in node:
                count(x)

    count(root)
    shared: list[Any] = []
    index: dict[str, int] = {}

    def replace(node: Any) -> Any:
        if isinstance(node, list):
            return [replace(x) for x in node]
        if not isinstance(node, dict):
            return node
        key = _key(node)
        out = {
            k: ({kk: replace(vv) for kk, vv in v.items()} if k in _NAMED else replace(v))
            for k, v in node.items()
        }
        if counts[key] > 1 and len(key) > 60:
            if key not in index:
                index[key] = len(shared)
                shared.append(out)
            return {"$r": index[key]}
        return out

    return replace(root), shared


def main() -> None:
    import ludwig
    from ludwig.config_validation.validation import get_schema

    schemas = {mt: _strip(get_schema(mt)) for mt in ("ecd", "llm")}
    tree, shared = _dedupe(schemas)
    out = {"ludwig_version": ludwig.__version__, "schemas": tree, "shared": shared}
    path = (
        pathlib.Path(__file__).resolve().parents[2] / "ludwig_nb/config/schema/ludwig_0_11.json"
    )
    path.write_text(json.dumps(out, separators=(",", ":"), sort_keys=True) + "\n")
    print(f"{path}: {path.stat().st_size} bytes, {len(shared)} shared subtrees", file=sys.stderr)


if __name__ == "__main__":
    main()
