"""``Config``: a validated, fully rendered config and the views the other layers want."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ludwig_nb.config.errors import ConfigWarning
from ludwig_nb.config.gpu_watch import GpuWatchConfig
from ludwig_nb.config.yaml_positions import KeyPath, Positions

__all__ = ["Config"]


class Config:
    """A validated config with every Ludwig default filled in.

    Build it with ``load_config``. ``to_dict()`` is the rendered config (plus ``gpu_watch``);
    ``to_ludwig_dict()`` is the same without our ``gpu_watch`` section, a valid Ludwig 0.11
    config. Accessors return copies: a ``Config`` never changes after it is made.
    ``warnings``: what ``load_config`` noted (old syntax upgraded, keys that do nothing).

    Args:
        rendered: The rendered config (every default filled in), owned by the ``Config``.
        source: The YAML text it was read from; None for a dict.
        positions: Where each key was written in ``source``, for located errors later.
    """

    warnings: tuple[ConfigWarning, ...] = ()

    def __init__(
        self,
        rendered: dict[str, Any],
        *,
        source: str | None = None,
        positions: Positions | None = None,
    ) -> None:
        self._rendered = rendered
        self._gpu_watch = GpuWatchConfig.from_dict(rendered.get("gpu_watch") or {})
        self.source = source
        self._positions = positions
        #: the ``hyperopt`` section as written, before Ludwig's defaults were filled in
        #: (its meaning is the search's to check: ``config.hyperopt.load_search_config``)
        self.written_hyperopt: object = None
        #: the whole document as written (before upgrades and defaults); None when unknown
        self.written: Mapping[str, object] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fully rendered config, ``gpu_watch`` included (a deep copy)."""
        return copy.deepcopy(self._rendered)

    def to_ludwig_dict(self) -> dict[str, object]:
        """The fully rendered Ludwig config, without ``gpu_watch`` (a deep copy)."""
        return {k: copy.deepcopy(v) for k, v in self._rendered.items() if k != "gpu_watch"}

    def to_yaml(self) -> str:
        """The rendered config as YAML text (what a run directory's config.yaml holds)."""
        import yaml

        return str(yaml.safe_dump(self._rendered, sort_keys=False, default_flow_style=False))

    @property
    def positions(self) -> Positions | None:
        """Where each key and value was written in the YAML source (None for a dict source).

        What an engine's capability check locates its refusals with.
        """
        return self._positions

    @property
    def gpu_watch(self) -> GpuWatchConfig:
        """The typed ``gpu_watch`` section (defaults filled in)."""
        return self._gpu_watch

    @property
    def model_type(self) -> str:
        """The rendered ``model_type`` (``"ecd"`` unless the config says otherwise)."""
        return str(self._rendered.get("model_type", "ecd"))

    @property
    def input_features(self) -> list[dict[str, object]]:
        """A copy of the rendered input features, every default filled in."""
        return copy.deepcopy(list(self._rendered.get("input_features", [])))

    @property
    def output_features(self) -> list[dict[str, object]]:
        """A copy of the rendered output features, every default filled in."""
        return copy.deepcopy(list(self._rendered.get("output_features", [])))

    @property
    def trainer(self) -> dict[str, object]:
        """A copy of the rendered ``trainer`` section."""
        return copy.deepcopy(dict(self._rendered.get("trainer", {})))

    @property
    def preprocessing(self) -> dict[str, object]:
        """A copy of the rendered global ``preprocessing`` section."""
        return copy.deepcopy(dict(self._rendered.get("preprocessing", {})))

    @property
    def combiner(self) -> dict[str, object]:
        """A copy of the rendered ``combiner`` section."""
        return copy.deepcopy(dict(self._rendered.get("combiner", {})))

    @property
    def feature_names(self) -> list[str]:
        """Input then output feature names, in config order."""
        return [
            f["name"]
            for f in (
                *self._rendered.get("input_features", []),
                *self._rendered.get("output_features", []),
            )
        ]

    def feature(self, name: str) -> dict[str, object]:
        """The rendered feature called ``name``. Raises ``KeyError`` naming the known ones."""
        for feature in (
            *self._rendered.get("input_features", []),
            *self._rendered.get("output_features", []),
        ):
            if feature.get("name") == name:
                return copy.deepcopy(dict(feature))
        raise KeyError(f"no feature named {name!r}; features: {', '.join(self.feature_names)}")

    def position(self, path: KeyPath) -> tuple[int, int] | None:
        """Where ``path`` (e.g. ``("input_features", 0, "name")``) was written.

        1-based (line, column), or None for a dict source or a filled-in default.
        """
        if self._positions is None:
            return None
        return self._positions.values.get(path)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and other._rendered == self._rendered

    __hash__ = None  # type: ignore[assignment]  # mutable-looking value object: no hashing

    def __repr__(self) -> str:
        ins = ", ".join(f["name"] for f in self._rendered.get("input_features", []))
        outs = ", ".join(f["name"] for f in self._rendered.get("output_features", []))
        return f"Config(inputs=[{ins}], outputs=[{outs}])"
