"""Engines by name. The built-in torch engine is the embedded default."""

from __future__ import annotations

from ludwig_nb.engines.base import Engine

__all__ = ["ENGINES", "get_engine"]

#: name -> "module:class"; imported only when asked for (torch is heavy).
ENGINES = {"builtin": "ludwig_nb.engines.builtin:BuiltinEngine"}


def get_engine(name: str = "builtin") -> Engine:
    """Return a new engine; ``ValueError`` names the engines that exist."""
    import importlib

    target = ENGINES.get(name)
    if target is None:
        raise ValueError(f"unknown engine {name!r}; available: {', '.join(sorted(ENGINES))}")
    module_name, cls_name = target.split(":")
    engine: Engine = getattr(importlib.import_module(module_name), cls_name)()
    return engine
