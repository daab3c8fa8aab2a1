"""Pre-save hook: a saved notebook never holds a ludwig_nb dashboard widget alone.

A dashboard output is a widget view; once its kernel is gone JupyterLab shows "Error
displaying widget: model not found" for it and never falls back to the bundle's other
types. So when a notebook is saved, every output that a ludwig_nb dashboard made (its
display metadata names the run) loses the widget type and gets a snapshot of the run
rendered from its ``status.json`` (status, progress, why it ended, metrics beside the
trivial baseline), or, when the run directory is gone, keeps the bundle's own
``text/html`` fallback. The open browser tab keeps its live widget; only the file
changes. Outputs of other widgets are left alone.

The snapshot's display metadata records the status it shows (``{"ludwig_nb": {"run_id",
"directory", "status"}}``). A run saved while live goes on after the save, so when the
notebook is reopened the sidebar extension (``labextension/src/notebook_refresh.ts``)
asks ``GET /ludwig-nb/runs/<id>/snapshot`` (:func:`read_snapshot`) for every snapshot
whose status was not final and puts the run's current snapshot in its place, until the
run has ended: a run that ends while its tab is closed still leaves its summary. While the
notebook's kernel still holds the dashboard's widget (the metadata's ``model_id``), it puts
the live widget back instead: a page reloaded mid-run shows the dashboard again.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from ludwig_nb.core.status_html import METADATA_KEY, snapshot_bundle, state_from_status
from ludwig_nb.store import registry, rundir

__all__ = ["WIDGET_MIMETYPE", "read_snapshot", "replace_live_widgets", "strip_live_widgets"]

log = logging.getLogger(__name__)

WIDGET_MIMETYPE = "application/vnd.jupyter.widget-view+json"


def read_snapshot(
    directory: str, pid_alive: Callable[[int], bool] = registry.pid_alive
) -> dict[str, Any] | None:
    """The run in ``directory`` as its snapshot.

    A run whose status is not final while its process (``status.json``'s pid) is gone is
    "interrupted".

    Args:
        directory: The run directory.
        pid_alive: Whether a pid names a live process (on this host).

    Returns:
        ``{"status", "final", "bundle"}``, where ``bundle`` is ``{"text/plain",
        "text/html"}`` (``core/status_html.py``); None when there is no readable
        ``status.json``.
    """
    status = rundir.read_json(Path(directory) / rundir.STATUS_FILE) if directory else None
    if not isinstance(status, dict):
        return None
    state = state_from_status(status)
    pid = status.get("pid")
    if not state.is_final and isinstance(pid, int) and not pid_alive(pid):
        state = dataclasses.replace(state, status="interrupted")
    early = status.get("early_stop")
    text = str(early.get("text") or "") if isinstance(early, Mapping) else ""
    bundle = snapshot_bundle(state, directory, early_stop=text)
    return {"status": state.status, "final": state.is_final, "bundle": bundle}


def _snapshot(
    meta: MutableMapping[str, object], data: MutableMapping[str, object]
) -> dict[str, object]:
    directory = str(meta.get("directory") or "")
    snapshot = read_snapshot(directory)
    if snapshot is not None:
        meta["status"] = snapshot["status"]  # the sidebar refreshes what was not final
        return dict(snapshot["bundle"])
    kept = {k: v for k, v in data.items() if k != WIDGET_MIMETYPE}
    return kept or {"text/plain": f"ludwig_nb run {meta.get('run_id', '')} (no status found)"}


def replace_live_widgets(notebook: MutableMapping[str, Any]) -> int:
    """Replace every dashboard widget output in ``notebook`` by its snapshot.

    ``notebook`` is nbformat 4 as a dict, changed in place; returns how many were replaced.
    """
    replaced = 0
    for cell in notebook.get("cells") or []:
        for output in cell.get("outputs") or []:
            data = output.get("data")
            meta = (output.get("metadata") or {}).get(METADATA_KEY)
            if not isinstance(data, MutableMapping) or WIDGET_MIMETYPE not in data:
                continue
            if not isinstance(meta, MutableMapping):
                continue
            output["data"] = _snapshot(meta, data)
            replaced += 1
    return replaced


def strip_live_widgets(model: dict[str, Any], **kwargs: object) -> None:
    """A ``ContentsManager`` pre-save hook (see ``register_pre_save_hook``)."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), MutableMapping):
        return
    count = replace_live_widgets(model["content"])
    if count:
        log.info(
            "ludwig_nb: %d dashboard output(s) saved as snapshots in %s",
            count,
            kwargs.get("path", "?"),
        )
