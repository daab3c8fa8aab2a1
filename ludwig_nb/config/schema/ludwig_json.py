"""Specs built from the snapshot of Ludwig 0.11's own JSON schema (``ludwig_0_11.json``).

Ludwig validates a config with a JSON schema that it builds at run time from its marshmallow
classes (``ludwig.config_validation.validation.get_schema``). ``scripts/build/ludwig_schema.py``
keeps its facts (types, enums, bounds, defaults, required keys, which ``type`` picks which
variant, whether unknown keys are allowed) in ``ludwig_0_11.json``; this module turns that into
the specs of ``fields.py``, so every key, type and default is Ludwig's own, and the problems are
located like every other one.

Unknown keys follow Ludwig: where its schema forbids them (``trainer``, each ``defaults`` entry)
they are errors with a "did you mean"; elsewhere Ludwig accepts and drops them, so they are
dropped with a warning (``Ctx.note``) that says they do nothing.

The snapshot is read on first use (about 150 kB, a few ms) and the specs are built lazily.
"""

from __future__ import annotations

import functools
import json
import math
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

from ludwig_nb.config.schema.fields import (
    Ctx,
    Spec,
    allowed_hint,
    bounds_problem,
    kind_of,
    suggest,
)
from ludwig_nb.config.yaml_positions import KeyPath

__all__ = ["SNAPSHOT_PATH", "JAnyOf", "JObject", "JValue", "ludwig_spec", "snapshot_node"]

SNAPSHOT_PATH = pathlib.Path(__file__).with_name("ludwig_0_11.json")

_WORDS = {
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "string": "a string",
    "array": "a list",
    "object": "a mapping",
    "null": "null",
}
_NO_DEFAULT: object = object()


@functools.cache
def _snapshot() -> dict[str, Any]:
    data: dict[str, object] = json.loads(SNAPSHOT_PATH.read_text(encoding="utf-8"))
    _widen_trial_resources(data)
    return data


def _widen_trial_resources(data: dict[str, Any]) -> None:
    """Take fractional trial resources and a storage path: the places past Ludwig 0.11's schema.

    The hyperopt executor's ``cpu_resources_per_trial`` / ``gpu_resources_per_trial`` may be
    fractions (Ray Tune takes them, Ludwig's own executor code handles ``0 < gpus < 1``, and trials
    sharing a GPU need them); Ludwig's schema says integers. An integer stays an integer (as
    Ludwig renders it); a fraction is kept as written. ``storage_path`` (no default: a config
    without it renders as Ludwig's) is where the ray executor's trials write their run folders
    (shared storage), as ``backend.storage_path`` is for a Ray Train run.
    """
    for node in data["shared"]:
        fields = node.get("properties", {}) if isinstance(node, dict) else {}
        if "gpu_resources_per_trial" in fields and "cpu_resources_per_trial" in fields:
            for key in ("gpu_resources_per_trial", "cpu_resources_per_trial"):
                fields[key] = {**fields[key], "type": ["integer", "number"], "minimum": 0}
            fields["storage_path"] = {"type": ["string", "null"]}


def _resolve(node: object) -> Any:
    if isinstance(node, dict) and "$r" in node:
        return _snapshot()["shared"][node["$r"]]
    return node


def snapshot_node(model_type: str, *path: str) -> object:
    """The raw schema node at ``path`` (property names) under ``model_type``'s top level."""
    node = _resolve(_snapshot()["schemas"][model_type])
    for key in path:
        node = _resolve(node)
        node = _resolve(node["items"]) if key == "[]" else _resolve(node["properties"][key])
    return node


@functools.cache
def ludwig_spec(model_type: str, *path: str) -> Spec:
    """The spec of ``model_type``'s schema node at ``path`` (``"[]"`` steps into a list)."""
    return build(snapshot_node(model_type, *path))


_BUILT: dict[int, Spec] = {}


def build(node: Any) -> Spec:
    """The spec for one JSON schema node (shared nodes are built once)."""
    raw = node
    node = _resolve(node)
    key = id(node)
    if key in _BUILT:
        return _BUILT[key]
    spec = _build(node)
    if raw is not node:
        _BUILT[key] = spec
    return spec


def _types(node: Mapping[str, Any]) -> tuple[str, ...]:
    t = node.get("type")
    if t is None:
        return ()
    return (t,) if isinstance(t, str) else tuple(t)


def _build(node: Mapping[str, Any]) -> Spec:
    if "oneOf" in node or "anyOf" in node:
        options = node.get("oneOf") or node.get("anyOf") or []
        return JAnyOf(options, node.get("default", _NO_DEFAULT))
    types = _types(node)
    if "properties" in node or "allOf" in node:
        return JObject(node)
    return JValue(node, types)


def _copy(value: object) -> object:
    """A deep copy of JSON data (faster than ``copy.deepcopy`` for it)."""
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


def _same(a: object, b: object) -> bool:
    """JSON equality: true is not 1, 1 is 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return bool(a == b)


def _kind_ok(value: object, types: Sequence[str]) -> bool:
    if not types:
        return True
    if value is None:
        return "null" in types
    if isinstance(value, bool):
        return "boolean" in types
    if isinstance(value, int):
        return "integer" in types or "number" in types
    if isinstance(value, float):
        return "number" in types or ("integer" in types and value.is_integer())
    if isinstance(value, str):
        return "string" in types
    if isinstance(value, list | tuple):
        return "array" in types
    if isinstance(value, Mapping):
        return "object" in types
    return False


class JValue(Spec):
    """A scalar or a list (``items``), with enum and bounds.

    Args:
        node: The value's node in Ludwig's JSON schema.
        types: Its JSON types (``integer``, ``number``, ``string``, ``boolean``, ``array``,
            ``null``).
    """

    def __init__(self, node: Mapping[str, Any], types: tuple[str, ...]) -> None:
        self.types = types
        self.enum: list[object] | None = node.get("enum")
        self._default = node.get("default", _NO_DEFAULT)
        self.bounds = (
            node.get("minimum"),
            node.get("exclusiveMinimum"),
            node.get("maximum"),
            node.get("exclusiveMaximum"),
        )
        items = node.get("items")
        self.items_node = items if isinstance(items, dict) else None  # tuple form: not checked
        self.min_items, self.max_items = node.get("minItems"), node.get("maxItems")
        self._items: Spec | None = None
        self.const = node.get("const", _NO_DEFAULT)

    @property
    def has_default(self) -> bool:
        """Whether Ludwig's schema gives this value a default."""
        return self._default is not _NO_DEFAULT

    def default(self) -> object:
        """A copy of the default, or None without one."""
        return None if self._default is _NO_DEFAULT else _copy(self._default)

    def accepts_kind(self, value: object) -> bool:
        """Whether ``value``'s JSON type (or enum membership) fits, bounds aside."""
        return _kind_ok(value, self.types) or (
            self.enum is not None and any(_same(value, e) for e in self.enum)
        )

    def describe(self) -> str:
        """The accepted values in words (the enum's members, or the types and bounds)."""
        if self.enum is not None:
            shown = [str(e) if e is not None else "null" for e in self.enum]
            if all(isinstance(e, bool) for e in self.enum):
                return "true or false"
            return "one of " + ", ".join(shown)
        words = [_WORDS[t] for t in self.types if t in _WORDS]
        if "an integer" in words and "a number" in words:
            words.remove("an integer")
        return " or ".join(words) or "a value"

    def check(self, value: object, path: KeyPath, ctx: Ctx) -> object:
        """Check the value against its enum, types and bounds; see :meth:`Spec.check`."""
        if self.enum is not None:
            if any(_same(value, e) for e in self.enum):
                return value
            if (
                isinstance(value, str)
                and value
                and all(isinstance(e, str | None) for e in self.enum)
            ):
                options = [e for e in self.enum if isinstance(e, str)]
                hint = suggest(value, options) or allowed_hint(options)
                ctx.problem(path, f"unknown value '{value}'", hint=hint)
                return value
            ctx.problem(path, f"must be {self.describe()}, not {kind_of(value)}")
            return value
        if not _kind_ok(value, self.types):
            ctx.problem(path, f"must be {self.describe()}, not {kind_of(value)}")
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            self._check_bounds(value, path, ctx)
            if isinstance(value, int) and "number" in self.types and "integer" not in self.types:
                return float(value)  # Ludwig loads a written number field as a float
        elif isinstance(value, list | tuple):
            return self._check_items(list(value), path, ctx)
        return value

    def _check_items(self, value: list[object], path: KeyPath, ctx: Ctx) -> list[object]:
        if self.min_items is not None and len(value) < self.min_items:
            ctx.problem(path, f"must have at least {self.min_items} item(s)")
        if self.max_items is not None and len(value) > self.max_items:
            ctx.problem(path, f"must have at most {self.max_items} item(s)")
        if self.items_node is None:
            return value
        if self._items is None:
            self._items = build(self.items_node)
        return [self._items.check(v, (*path, i), ctx) for i, v in enumerate(value)]

    def _check_bounds(self, number: float, path: KeyPath, ctx: Ctx) -> None:
        if math.isnan(number):
            return  # JSON schema compares NaN as in range; Ludwig lets it through
        problem = bounds_problem(number, self.bounds)
        if problem is not None:
            ctx.problem(path, problem)


class JAnyOf(Spec):
    """One of several schemas (Ludwig's ``oneOf``).

    E.g. an initializer name or mapping, ``batch_size`` as an integer or ``"auto"``.

    Args:
        options: The alternatives' schema nodes (built into specs on first use).
        default: The default of the whole value, or the no-default marker.
    """

    def __init__(self, options: Sequence[object], default: object) -> None:
        self._nodes = list(options)
        self._options: list[Spec] | None = None
        self._default = default

    @property
    def options(self) -> list[Spec]:
        """The alternatives' specs, built on first use."""
        if self._options is None:
            self._options = [build(o) for o in self._nodes]
        return self._options

    @property
    def has_default(self) -> bool:
        """Whether this value or one of its alternatives has a default."""
        return self._default is not _NO_DEFAULT or any(
            getattr(o, "has_default", False) for o in self.options
        )

    def default(self) -> object:
        """The default, else the first alternative's (a section renders its own defaults)."""
        if self._default is not _NO_DEFAULT:
            return _copy(self._default)
        for option in self.options:
            if isinstance(option, JObject):
                return option.default()  # a nested section: Ludwig renders it in full
        if any(_accepts_kind(o, None) for o in self.options):
            return None  # Ludwig's marshmallow field is optional: it renders null
        for option in self.options:
            if getattr(option, "has_default", False):
                return option.default()
        return None

    def accepts_kind(self, value: object) -> bool:
        """Whether any alternative accepts ``value``'s JSON type."""
        return any(_accepts_kind(o, value) for o in self.options)

    def describe(self) -> str:
        """The alternatives' descriptions joined by ``or``."""
        return " or ".join(dict.fromkeys(o.describe() for o in self.options))

    def check(self, value: object, path: KeyPath, ctx: Ctx) -> object:
        """Check ``value`` against each alternative in turn and keep the first that fits.

        The problems reported are those of the closest alternative. See :meth:`Spec.check`.
        """
        if value is None and any(_accepts_kind(o, None) for o in self.options):
            return None  # an explicit null option wins over a section that would fill itself
        for option in self.options:
            trial = Ctx(ctx.positions)
            rendered = option.check(value, path, trial)
            if not trial.problems:
                ctx.notes.extend(trial.notes)
                return rendered
        fitting = [o for o in self.options if _accepts_kind(o, value)]
        if len(fitting) == 1:
            return fitting[0].check(value, path, ctx)
        ctx.problem(path, f"must be {self.describe()}, not {kind_of(value)}")
        return value


def _accepts_kind(spec: Spec, value: object) -> bool:
    accepts = getattr(spec, "accepts_kind", None)
    return bool(accepts(value)) if accepts is not None else True


class JObject(Spec):
    """A mapping of named fields.

    When the schema branches on ``type`` (``allOf`` of ``if type == X then ...``), the ``type`` key
    picks the variant's extra fields.

    Args:
        node: The section's node in Ludwig's JSON schema.
    """

    def __init__(self, node: Mapping[str, Any]) -> None:
        self.types = _types(node) or ("object",)
        self.nullable = "null" in self.types
        self._default = node.get("default", _NO_DEFAULT)
        self.additional = node.get("additionalProperties", True) is not False
        self.required = tuple(node.get("required", ()))
        self._props_raw: dict[str, object] = dict(_resolve(node.get("properties", {})))
        self._props: dict[str, Spec] = {}
        self.variant_nodes: dict[str, Any] = {}
        for raw_clause in node.get("allOf", ()):
            clause = _resolve(raw_clause)
            cond = _resolve(
                _resolve(_resolve(clause.get("if", {})).get("properties", {})).get("type", {})
            )
            const = cond.get("const")
            if const is not None:
                self.variant_nodes[const] = _resolve(clause.get("then", {}))
        self._variants: dict[str, JObject] = {}
        self._fields: dict[str | None, dict[str, Spec]] = {}
        self._rendered_default: object = _NO_DEFAULT
        type_node = _resolve(self._props_raw.get("type", {}))
        self.type_default: str | None = (
            type_node.get("default") if isinstance(type_node, dict) else None
        )

    @property
    def has_default(self) -> bool:
        """Always True: a section renders its own defaults."""
        return True

    def field(self, key: str) -> Spec | None:
        """The spec of property ``key``, built on first use; None for an unknown key."""
        if key not in self._props_raw:
            return None
        if key not in self._props:
            self._props[key] = build(self._props_raw[key])
        return self._props[key]

    @property
    def field_names(self) -> list[str]:
        """The names of the section's properties, in schema order."""
        return list(self._props_raw)

    def variant(self, name: str) -> JObject | None:
        """The section of type ``name`` (e.g. an encoder), built on first use; None if unknown."""
        if name not in self.variant_nodes:
            return None
        if name not in self._variants:
            self._variants[name] = JObject(self.variant_nodes[name])
        return self._variants[name]

    def fields_for(self, value: Mapping[str, object] | None) -> dict[str, Spec]:
        """Every field of the variant that ``value`` picks (the base fields alone if none)."""
        chosen = self._chosen(value)
        if chosen not in self._fields:
            out = {k: s for k in self.field_names if (s := self.field(k)) is not None}
            variant = self.variant(chosen) if chosen is not None else None
            if variant is not None:
                out.update(variant.fields_for(value))
            self._fields[chosen] = out
        return self._fields[chosen]

    def _chosen(self, value: Mapping[str, object] | None) -> str | None:
        if not self.variant_nodes:
            return None
        chosen = (value or {}).get("type", self.type_default)
        return chosen if isinstance(chosen, str) else None

    def default(self) -> object:
        """The section rendered from nothing: every default filled in."""
        if self._default is not _NO_DEFAULT:
            return _copy(self._default)
        if self._rendered_default is _NO_DEFAULT:
            self._rendered_default = self.render({})
        return _copy(self._rendered_default)

    def render(self, value: Mapping[str, object]) -> dict[str, object]:
        """``value`` with every absent field filled with its default (no checks)."""
        out = {}
        for key, spec in self.fields_for(value).items():
            if key in value:
                out[key] = value[key]
            elif getattr(spec, "has_default", False):
                out[key] = spec.default()
        return out

    def accepts_kind(self, value: object) -> bool:
        """Whether ``value`` is a mapping (or None for a nullable section)."""
        return isinstance(value, Mapping) or (value is None and self.nullable)

    def describe(self) -> str:
        """``"a mapping"`` (``or null`` when nullable)."""
        return "a mapping" + (" or null" if self.nullable else "")

    def check(self, value: object, path: KeyPath, ctx: Ctx) -> object:
        """Check the section (its type variant, known keys, every field) and fill in defaults.

        A bare string is read as ``{"type": value}``, as Ludwig < 0.6 wrote it. See
        :meth:`Spec.check`.
        """
        if value is None:
            return None if self.nullable else self.default()
        if isinstance(value, str) and self.variant_nodes:
            value = {"type": value}  # Ludwig < 0.6 wrote ``encoder: rnn``
        if not isinstance(value, Mapping):
            ctx.problem(path, f"must be {self.describe()}, not {kind_of(value)}")
            return self.default()
        chosen = self._chosen(value)
        if self.variant_nodes and chosen not in self.variant_nodes:
            self._unknown_type(value, path, ctx)
            return dict(value)
        fields = self.fields_for(value)
        out: dict[str, object] = {}
        for key, spec in fields.items():
            if key in value:
                out[key] = spec.check(value[key], (*path, key), ctx)
            elif key in self.required:
                ctx.problem(
                    path, f"missing required key '{key}'", hint=_misspelt(key, value, fields)
                )
            elif getattr(spec, "has_default", False) and key not in self.required:
                out[key] = spec.default()
        self._unknown_keys(value, fields, path, ctx)
        return out

    def _unknown_type(self, value: Mapping[str, object], path: KeyPath, ctx: Ctx) -> None:
        chosen = value.get("type", self.type_default)
        options = sorted(self.variant_nodes)
        if chosen is None:
            fix = _misspelt("type", value, self.fields_for(None)) or allowed_hint(options)
            ctx.problem(path, "missing required key 'type'", hint=fix)
            return
        hint = suggest(chosen, options) if isinstance(chosen, str) else None
        last = next((k for k in reversed(path) if isinstance(k, str)), "type")
        what = {"split": "split type", "input_features": "feature type"}.get(last, last)
        ctx.problem(
            (*path, "type"), f"unknown {what} '{chosen}'", hint=hint or allowed_hint(options)
        )

    def _unknown_keys(
        self, value: Mapping[str, object], fields: Mapping[str, Spec], path: KeyPath, ctx: Ctx
    ) -> None:
        for key in value:
            if key in fields:
                continue
            close = suggest(str(key), fields)
            if not self.additional:
                hint = close or allowed_hint(sorted(fields))
                ctx.problem((*path, key), f"unknown key '{key}'", hint=hint, key=True)
            else:
                ctx.note(
                    (*path, key),
                    f"'{key}' is not a Ludwig key here: Ludwig ignores it, and so does ludwig_nb",
                    hint=close or "remove it",
                )


def _misspelt(key: str, value: Mapping[str, object], fields: Mapping[str, Spec]) -> str | None:
    """``"is 'nmae' a misspelling of it?"`` when a written key is close to the missing one."""
    for k in value:
        if k not in fields and suggest(str(k), [key]):
            return f"is '{k}' a misspelling of '{key}'?"
    return None
