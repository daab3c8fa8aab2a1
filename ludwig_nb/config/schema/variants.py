"""Mappings whose ``type`` key picks their schema (encoders, decoders, losses, optimizers,
combiners, splits), and ``Loose`` mappings kept exactly as written."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ludwig_nb.config.schema.fields import Ctx, FreeDict, Spec, allowed_hint, kind_of, suggest
from ludwig_nb.config.yaml_positions import KeyPath

__all__ = ["Loose", "Variants"]


class Loose(Spec):
    """A mapping Ludwig accepts that we do not model key by key (kept exactly as written)."""

    def default(self) -> Any:
        return {}

    def check(self, value: Any, path: KeyPath, ctx: Ctx) -> Any:
        return {} if value is None else FreeDict(nullable=False).check(value, path, ctx)


class Variants(Spec):
    """A mapping whose ``type`` key picks its schema (a ``Section`` or ``Loose``).

    A bare string is shorthand for ``{type: <string>}`` (Ludwig's older ``encoder: rnn``).
    """

    def __init__(
        self,
        variants: Mapping[str, Spec],
        default_type: str | None,
        *,
        what: str = "type",
        nullable: bool = False,
    ) -> None:
        self.variants = dict(variants)
        self.default_type = default_type
        self.what = what
        self.nullable = nullable

    def default(self) -> Any:
        if self.default_type is None:
            return None
        rendered = self.variants[self.default_type].default()
        return {"type": self.default_type, **rendered}

    def describe(self) -> str:
        return f"a mapping with a 'type' ({self.what})"

    def check(self, value: Any, path: KeyPath, ctx: Ctx) -> Any:
        if value is None:
            return None if self.nullable else self.default()
        if isinstance(value, str):
            value = {"type": value}
        if not isinstance(value, Mapping):
            ctx.problem(path, f"must be {self.describe()}, not {kind_of(value)}")
            return self.default()
        chosen = value.get("type", self.default_type)
        if chosen is None:
            ctx.problem(
                path,
                f"missing required key 'type' ({self.what})",
                hint=allowed_hint(sorted(self.variants)),
            )
            return dict(value)
        if not isinstance(chosen, str) or chosen not in self.variants:
            hint = suggest(chosen, self.variants) if isinstance(chosen, str) else None
            ctx.problem(
                (*path, "type"),
                f"unknown {self.what} '{chosen}'",
                hint=hint or allowed_hint(sorted(self.variants)),
            )
            return dict(value)
        body = {k: v for k, v in value.items() if k != "type"}
        return {"type": chosen, **self.variants[chosen].check(body, path, ctx)}
