"""``load_config``: YAML text, a mapping or a ``Config`` -> a validated, rendered ``Config``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ludwig_nb.config.cross_checks import check_across
from ludwig_nb.config.engine_support import check_engine_support
from ludwig_nb.config.errors import ConfigError
from ludwig_nb.config.hyperopt import check_hyperopt
from ludwig_nb.config.model import Config
from ludwig_nb.config.render import render
from ludwig_nb.config.schema.fields import Ctx
from ludwig_nb.config.yaml_positions import Positions, parse_yaml

__all__ = ["KNOWN_ENGINES", "load_config"]

#: engines whose limits the config layer knows; None and "ludwig" check nothing beyond Ludwig
KNOWN_ENGINES = (None, "builtin", "ray", "ludwig")


def load_config(
    source: str | Mapping[str, Any] | Config,
    engine: str | None = "builtin",
    *,
    line_offset: int = 0,
) -> Config:
    """Parse, validate and render a config.

    ``source``: YAML text, a mapping (e.g. ``yaml.safe_load`` output) or a ``Config``.
    ``engine``: "builtin" (default) or "ray" also reject what the built-in training loop
    cannot run (``UnsupportedByEngine``); None or "ludwig" accept every valid Ludwig config.
    ``line_offset``: added to every reported line (1 when the YAML starts on a cell's line 2).

    Raises ``ConfigError`` listing every problem found (``UnsupportedByEngine`` when the config
    is valid Ludwig but not for this engine), and ``ValueError`` for an unknown ``engine``.
    """
    if engine not in KNOWN_ENGINES:
        raise ValueError(f"unknown engine {engine!r}; known: builtin, ray, ludwig or None")
    try:
        return _load(source, engine)
    except ConfigError as err:
        raise (err.shifted(line_offset) if line_offset else err) from None


def _load(source: str | Mapping[str, Any] | Config, engine: str | None) -> Config:
    text: str | None = None
    positions: Positions | None = None
    if isinstance(source, Config):
        data: Mapping[str, Any] = source.to_dict()
        text, positions = source.source, source._positions
    elif isinstance(source, str):
        located = parse_yaml(source)
        data, positions, text = located.data, located.positions, source
    elif isinstance(source, Mapping):
        data = source
        bad = [k for k in data if not isinstance(k, str)]
        if bad:
            raise ConfigError(f"config keys must be strings, not {bad[0]!r}")
    else:
        raise ConfigError(f"a config is YAML text, a dict or a Config, not {type(source).__name__}")
    ctx = Ctx(positions)
    rendered = render(data, ctx)
    check_across(rendered, ctx)
    check_hyperopt(rendered, ctx)
    if not ctx.problems and engine in ("builtin", "ray"):
        check_engine_support(rendered, "builtin", ctx)
        if engine == "ray":
            ctx.problems = [p for p in ctx.problems if getattr(p, "engine", None) != "ray"]
    if ctx.problems:
        ordered = sorted(ctx.problems, key=lambda p: (p.line is None, p.line or 0, p.column or 0))
        raise ConfigError.collect(ordered)
    return Config(rendered, engine=engine, source=text, positions=positions)
