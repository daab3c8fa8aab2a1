"""``load_config``: YAML text, a mapping or a ``Config`` -> a validated, rendered ``Config``."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TypeAlias

from ludwig_nb.config.cross_checks import check_across
from ludwig_nb.config.errors import ConfigError
from ludwig_nb.config.model import Config
from ludwig_nb.config.render import render
from ludwig_nb.config.schema.fields import Ctx
from ludwig_nb.config.yaml_positions import Positions, parse_yaml

__all__ = ["ConfigSource", "load_config"]

#: what a config may be given as: YAML text, a mapping (``yaml.safe_load`` output) or a ``Config``
ConfigSource: TypeAlias = str | Mapping[str, object] | Config


def load_config(source: ConfigSource, *, line_offset: int = 0) -> Config:
    """Parse, validate and render a config: every valid Ludwig config is accepted.

    ``source``: YAML text, a mapping (e.g. ``yaml.safe_load`` output) or a ``Config``.
    ``line_offset``: added to every reported line (1 when the YAML starts on a cell's line 2).
    What an engine can run is the engine's to say (``Engine.check``), not the config layer's.

    Old syntax that Ludwig upgrades (``training:``, encoder parameters on the feature, ...) is
    upgraded the same way, and keys Ludwig ignores are dropped; each is a located
    ``ConfigWarning``, issued with ``warnings.warn`` and kept in ``Config.warnings``.

    Raises ``ConfigError`` listing every problem found.
    """
    try:
        config = _load(source)
    except ConfigError as err:
        raise (err.shifted(line_offset) if line_offset else err) from None
    if line_offset:
        config.warnings = tuple(w.shifted(line_offset) for w in config.warnings)
    for note in config.warnings:  # old syntax upgraded, keys that do nothing
        warnings.warn(note, stacklevel=2)
    return config


def _load(source: ConfigSource) -> Config:
    text: str | None = None
    positions: Positions | None = None
    if isinstance(source, Config):
        data: Mapping[str, object] = source.to_dict()
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
    if ctx.problems:
        ordered = sorted(ctx.problems, key=lambda p: (p.line is None, p.line or 0, p.column or 0))
        raise ConfigError.collect(ordered)
    config = Config(rendered, source=text, positions=positions)
    config.warnings = tuple(ctx.notes)
    config.written_hyperopt = (
        source.written_hyperopt if isinstance(source, Config) else data.get("hyperopt")
    )
    config.written = source.written if isinstance(source, Config) else data
    return config
