r"""The config language.

Ludwig 0.11 configs (plus our ``gpu_watch``) from YAML text or a dict, validated in one pass, every
mistake located, and rendered with every default filled in.

    >>> from ludwig_nb.config import load_config
    >>> cfg = load_config("input_features: [{name: x, type: number}]\n"
    ...                   "output_features: [{name: y, type: binary}]")
    >>> cfg.to_dict()["input_features"][0]["preprocessing"]["normalization"]
    'zscore'

Importing this package imports pyyaml only (no torch, no threads).
"""

from __future__ import annotations

from ludwig_nb.config.errors import ConfigError, ConfigWarning, UnsupportedByEngine
from ludwig_nb.config.gpu_watch import AlarmRuleConfig, GpuWatchConfig
from ludwig_nb.config.load import ConfigSource, load_config
from ludwig_nb.config.model import Config
from ludwig_nb.config.render import LUDWIG_VERSION

__all__ = [
    "LUDWIG_VERSION",
    "AlarmRuleConfig",
    "Config",
    "ConfigError",
    "ConfigSource",
    "ConfigWarning",
    "GpuWatchConfig",
    "UnsupportedByEngine",
    "load_config",
]
