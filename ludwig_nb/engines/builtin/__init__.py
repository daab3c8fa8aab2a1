"""The built-in torch engine (Ludwig ECD). Imported lazily: torch loads on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ludwig_nb.engines.builtin.engine import BuiltinEngine
    from ludwig_nb.engines.builtin.model_io import BuiltinModel, load_model
    from ludwig_nb.engines.builtin.trainer import TrainingDiverged

__all__ = ["BuiltinEngine", "BuiltinModel", "TrainingDiverged", "load_model"]

_WHERE = {
    "BuiltinEngine": "ludwig_nb.engines.builtin.engine",
    "BuiltinModel": "ludwig_nb.engines.builtin.model_io",
    "load_model": "ludwig_nb.engines.builtin.model_io",
    "TrainingDiverged": "ludwig_nb.engines.builtin.trainer",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
