"""Run the notebooks in place and store their outputs (the nbval reference).

    python scripts/build/execute_notebooks.py [notebooks/NAME.ipynb ...]

Regenerate deliberately after changing a notebook or what it prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2] / "notebooks"


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    nbformat.write(nb, path)
    print("executed", path)


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted(ROOT.glob("*.ipynb"))
    for p in paths:
        execute(p)
