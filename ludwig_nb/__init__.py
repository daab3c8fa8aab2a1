"""ludwig_nb: train Ludwig-config models from a notebook cell and watch the GPU while they train.

Importing this package is cheap on purpose: no torch, no NVML, no threads. The public API
(``train``, ``load_model``, ``estimate``, ``load_config``, ``show``) is resolved lazily on
first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "compare",
    "estimate",
    "hyperopt",
    "load_config",
    "load_ipython_extension",
    "load_model",
    "show",
    "train",
    "unload_ipython_extension",
]

# public name -> "module:attribute", imported on first access (PEP 562)
_LAZY = {
    "load_config": "ludwig_nb.config:load_config",
    "train": "ludwig_nb.runs:train",
    "hyperopt": "ludwig_nb.search:hyperopt",
    "load_model": "ludwig_nb.runs:load_model",
    "estimate": "ludwig_nb.runs:estimate",
    "compare": "ludwig_nb.ui.compare_view:compare",
    "show": "ludwig_nb.ui:show_run",
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'ludwig_nb' has no attribute {name!r}")
    module_name, attr = target.split(":")
    value = getattr(importlib.import_module(module_name), attr)
    globals()[name] = value
    return value


# The entry hooks name their modules as strings: the package root sits outside the layers,
# and a static import here would make every layer appear to depend on every other one.
def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext ludwig_nb``: register the magics."""
    importlib.import_module("ludwig_nb.ipython.extension").load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext ludwig_nb``: stop the pump and the sampler; runs stay recoverable."""
    importlib.import_module("ludwig_nb.ipython.extension").unload(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "ludwig-nb"}]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "ludwig_nb"}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    importlib.import_module("ludwig_nb.server.extension").load(server_app)
