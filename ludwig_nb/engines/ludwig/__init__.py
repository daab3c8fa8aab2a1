"""``engine: ludwig``.

Real Ludwig (0.11+) through ``LudwigModel`` and its public ``Callback`` API, in the run's thread.
Importing this package does not import Ludwig: the engine pays Ludwig's 10-20 s import inside the
run, as a phase the dashboard shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ludwig_nb.engines.ludwig.engine import LudwigEngine
    from ludwig_nb.engines.ludwig.model import LudwigTrainedModel

__all__ = ["LudwigEngine", "LudwigTrainedModel"]

_WHERE = {
    "LudwigEngine": "ludwig_nb.engines.ludwig.engine",
    "LudwigTrainedModel": "ludwig_nb.engines.ludwig.model",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
