"""The model manifest.

One small JSON file in a saved model's folder that names the engine which loads it, so that
``load_model`` dispatches without guessing.

    ludwig_nb_model.json   {"engine": "builtin", "format": 1, "path": "."}

``path`` (relative to the folder) is where the engine's own files are, when they live
elsewhere: a Ludwig run's ``model/`` points into Ludwig's output directory. A folder without a
manifest (saved before manifests existed) is a built-in model when it holds the built-in
weights file, a Ludwig model when it holds Ludwig's ``model_weights``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["MANIFEST_FILE", "read_manifest", "write_manifest"]

MANIFEST_FILE = "ludwig_nb_model.json"
_FORMAT = 1


def write_manifest(folder: Path, engine: str, path: str = ".", **extra: Any) -> Path:
    """Write ``folder``'s manifest (creating the folder); returns the file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / MANIFEST_FILE
    body = {"engine": engine, "format": _FORMAT, "path": path, **extra}
    target.write_text(json.dumps(body, indent=2), encoding="utf-8")
    return target


def read_manifest(folder: Path) -> Mapping[str, Any]:
    """The manifest of the model saved in ``folder``, or the one implied by an older folder.

    Raises ``FileNotFoundError`` when ``folder`` holds no saved model of any engine, and
    ``ValueError`` (naming the file) for a manifest that is not valid JSON.
    """
    target = folder / MANIFEST_FILE
    if target.is_file():
        try:
            body = json.loads(target.read_text(encoding="utf-8"))
        except ValueError as err:
            raise ValueError(f"{target}: not a valid model manifest ({err})") from None
        if not isinstance(body, dict) or not isinstance(body.get("engine"), str):
            raise ValueError(f"{target}: not a valid model manifest (no 'engine' name)")
        return body
    if (folder / "model_weights.pt").is_file():
        return {"engine": "builtin", "format": 0, "path": "."}
    if (folder / "model_weights").exists() and (folder / "model_hyperparameters.json").is_file():
        return {"engine": "ludwig", "format": 0, "path": "."}
    raise FileNotFoundError(
        f"{folder}: not a saved model (no {MANIFEST_FILE}, no model weights); "
        "pass a run directory or its model/ folder"
    )
