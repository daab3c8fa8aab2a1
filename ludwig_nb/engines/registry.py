"""The one list of engine names, and how a name (or "auto") becomes an engine for a config.

``builtin`` is the embedded torch engine; ``ludwig`` runs real Ludwig (the ``[ludwig]``
extra); ``ray`` runs the built-in loop on Ray Train workers (the ``[ray]`` extra; ``auto``
picks it for ``backend: {type: ray}``). ``auto`` (the default everywhere) otherwise picks
the built-in engine when it can run the config, else Ludwig when it is installed, else
raises the built-in engine's located refusal, which names ``pip install "ludwig_nb[ludwig]"``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ludwig_nb.config.errors import UnsupportedByEngine
from ludwig_nb.engines.base import Engine, EngineUnavailable

if TYPE_CHECKING:
    from ludwig_nb.config import Config

__all__ = [
    "AUTO",
    "DEFAULT",
    "ENGINES",
    "ENGINE_NAMES",
    "default_engine",
    "get_engine",
    "select_engine",
]

#: name -> "module:class"; imported only when asked for (torch and Ludwig are heavy).
ENGINES = {
    "builtin": "ludwig_nb.engines.builtin:BuiltinEngine",
    "ludwig": "ludwig_nb.engines.ludwig:LudwigEngine",
    "ray": "ludwig_nb.engines.ray:RayEngine",
}
AUTO = "auto"
#: the engine ``auto`` picks for a config every engine can run: the one warmed up ahead
DEFAULT = "builtin"
#: what ``engine=`` accepts, in the order help texts list them
ENGINE_NAMES = (AUTO, *ENGINES)


def get_engine(name: str) -> Engine:
    """Return a new engine; ``ValueError`` names the engines that exist."""
    target = ENGINES.get(name)
    if target is None:
        raise ValueError(f"unknown engine {name!r}; choose one of {', '.join(ENGINE_NAMES)}")
    module_name, cls_name = target.split(":")
    engine: Engine = getattr(importlib.import_module(module_name), cls_name)()
    return engine


def default_engine() -> Engine:
    """The engine ``auto`` picks first (:data:`DEFAULT`): what the CLI and a kernel warm up."""
    return get_engine(DEFAULT)


def select_engine(name: str, config: Config) -> Engine:
    """The engine that runs ``config``.

    ``name``'s after its check, or for "auto" the first of builtin, ludwig that can. Raises
    ``UnsupportedByEngine`` (located), ``EngineUnavailable`` (what to install) or ``ValueError``
    (unknown name).
    """
    if name == AUTO and ((config.to_dict().get("backend") or {}).get("type")) == "ray":
        name = "ray"  # `backend: {type: ray}` is the built-in loop on Ray Train workers
    if name != AUTO:
        engine = get_engine(name)
        engine.check(config)
        return engine
    first = default_engine()
    try:
        first.check(config)
    except UnsupportedByEngine as refusal:
        ludwig = get_engine("ludwig")
        try:
            ludwig.check(config)
        except EngineUnavailable:
            raise refusal from None
        return ludwig
    return first
