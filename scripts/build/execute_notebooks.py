"""Run the notebooks in place and store their outputs (the nbval reference).

    python scripts/build/execute_notebooks.py [notebooks/NAME.ipynb ...]

Regenerate deliberately after changing a notebook or what it prints. The kernel's widget
state is not saved with the outputs (:func:`clear_widget_state`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2] / "notebooks"


#: a widget view's mimetype: its model lives only in the kernel that ran the notebook
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def clear_widget_state(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop the saved widget state and the widget views that have a readable fallback.

    The state is a copy of the kernel's widget models (100-300 KiB a notebook) that a later
    front end replays with its own widget versions; without it, a view would read "model not
    found", so each view keeps only its text/html or text/plain fallback (nbval never compares
    views). Returns ``nb``, changed in place.
    """
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data and len(data) > 1:
                del data[WIDGET_VIEW]
    return nb


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        record_timing=False,
        store_widget_state=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    nbformat.write(clear_widget_state(nb), path)
    print("executed", path)


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted(ROOT.glob("*.ipynb"))
    for p in paths:
        execute(p)
