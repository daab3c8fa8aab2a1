"""ludwig_nb.ui: the notebook views of a run (live dashboard, text fallback, final summary).

Names resolve lazily, so importing this package does not import ipywidgets or bqplot.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Dashboard", "TextView", "show_run", "show_view", "shutdown"]

_LAZY = {
    "Dashboard": "ludwig_nb.ui.dashboard",
    "TextView": "ludwig_nb.ui.text_view",
    "show_run": "ludwig_nb.ui.show",
    "show_view": "ludwig_nb.ui.show",
    "shutdown": "ludwig_nb.ui.show",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ludwig_nb.ui' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
