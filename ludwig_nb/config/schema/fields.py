"""A small declarative schema language: parameter specs that validate, locate and render.

Every spec has ``check(value, path, ctx) -> rendered value`` (problems go to ``ctx``, never
raised, so that one pass reports every mistake) and ``default() -> rendered default``.
``Section`` is a mapping with ``extra="forbid"`` semantics and "did you mean" suggestions;
``Variants`` picks a ``Section`` by its ``type`` key (encoders, decoders, losses, ...).
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ludwig_nb.config.errors import ConfigError, ConfigWarning
from ludwig_nb.config.yaml_positions import KeyPath, Positions, format_path

__all__ = [
    "MISSING",
    "Ctx",
    "FreeDict",
    "ListOf",
    "Param",
    "Section",
    "Spec",
    "allowed_hint",
    "bounds_problem",
    "kind_of",
    "suggest",
]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"

    def __deepcopy__(self, memo: dict[int, object]) -> _Missing:
        return self  # a singleton: ``default() is MISSING`` must hold after copying


#: the default of a required key
MISSING: object = _Missing()


def suggest(word: str, options: Iterable[str]) -> str | None:
    """``"did you mean 'x'?"`` for the closest option, or None."""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def allowed_hint(options: Sequence[str]) -> str:
    """``"allowed: a, b, c"`` (shortened when long)."""
    shown = ", ".join(options[:14])
    return f"allowed: {shown}" + (", ..." if len(options) > 14 else "")


class Ctx:
    """Collects located problems while a document is checked.

    Args:
        positions: Where each key was written, to locate problems; None for a dict source.
    """

    def __init__(self, positions: Positions | None = None) -> None:
        self.positions = positions
        self.problems: list[ConfigError] = []
        self.notes: list[ConfigWarning] = []
        self._muted: list[KeyPath] = []

    @contextlib.contextmanager
    def muted(self, paths: Sequence[KeyPath]) -> Iterator[None]:
        """Drop problems under ``paths`` while inside.

        For values borrowed from ``defaults``, whose problems were already reported where they were
        written.
        """
        self._muted.extend(paths)
        try:
            yield
        finally:
            del self._muted[len(self._muted) - len(paths) :]

    def problem(
        self,
        path: KeyPath,
        message: str,
        *,
        hint: str | None = None,
        key: bool = False,
        kind: type[ConfigError] = ConfigError,
        **extra: Any,
    ) -> None:
        """Record a problem at ``path`` (at its key when ``key``, else at its value)."""
        if any(path[: len(m)] == m for m in self._muted):
            return
        line = column = None
        source = None
        if self.positions is not None:
            where = self.positions.locate(path, key=key)
            if where is not None:
                line, column = where
                source = self.positions.text_of(line)
        self.problems.append(
            kind(
                message,
                line=line,
                column=column,
                path=format_path(path),
                hint=hint,
                source_line=source,
                **extra,
            )
        )

    def note(self, path: KeyPath, message: str, *, hint: str | None = None) -> None:
        """Record a warning at the key ``path``: old syntax upgraded, or a key that does nothing."""
        if any(path[: len(m)] == m for m in self._muted):
            return
        where = self.positions.locate(path, key=True) if self.positions is not None else None
        line, column = where if where is not None else (None, None)
        source = self.positions.text_of(line) if self.positions is not None and line else None
        self.notes.append(
            ConfigWarning(
                message,
                line=line,
                column=column,
                path=format_path(path),
                hint=hint,
                source_line=source,
            )
        )

    def located(self, path: KeyPath) -> bool:
        """Whether ``path`` itself was written in the document (not a filled-in default)."""
        return self.positions is not None and path in self.positions.values


class Spec:
    """Base of all specs."""

    def check(self, value: object, path: KeyPath, ctx: Ctx) -> Any:
        """Validate ``value`` written at ``path`` and return it rendered (defaults filled in).

        Problems go to ``ctx`` (located by ``path``) instead of being raised, so one pass reports
        every mistake; what is returned for a bad value is a best effort.
        """
        raise NotImplementedError

    def default(self) -> object:
        """The rendered value when the key is absent (:data:`MISSING` when there is none)."""
        raise NotImplementedError

    def describe(self) -> str:
        """What an accepted value is, in words for an error message (``"must be <this>"``)."""
        return "a value"


_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "str": "a string",
    "null": "null",
    "list": "a list",
}


def kind_of(value: object) -> str:
    """Describe ``value``'s YAML kind for an error message, e.g. ``"a boolean"``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return f"the string '{value}'" if len(value) < 40 else "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


class Param(Spec):
    """A scalar parameter with its types, choices, literals and bounds.

    ``types`` among int/float/bool/str/null, optional ``choices`` (for strings), ``literals``
    (strings accepted beside numbers, e.g. ``"auto"``) and bounds.

    Args:
        default: The value when the key is absent.
        *types: The accepted types among ``int``, ``float``, ``bool``, ``str``, ``null``.
        choices: The accepted strings (implies ``str``).
        literals: Strings accepted beside numbers, e.g. ``"auto"``.
        ge: Inclusive lower bound.
        gt: Exclusive lower bound.
        le: Inclusive upper bound.
        lt: Exclusive upper bound.
    """

    def __init__(
        self,
        default: object,
        *types: str,
        choices: Sequence[str] | None = None,
        literals: Sequence[str] = (),
        ge: float | None = None,
        gt: float | None = None,
        le: float | None = None,
        lt: float | None = None,
    ) -> None:
        self._default = default
        self.types = frozenset(types) | ({"str"} if choices else set())
        self.choices = tuple(choices) if choices else None
        self.literals = tuple(literals)
        self.bounds = (ge, gt, le, lt)

    def default(self) -> object:
        """A copy of the parameter's default."""
        return copy.deepcopy(self._default)

    def describe(self) -> str:
        """The accepted types, choices and literals in words, e.g. ``"an integer or 'auto'"``."""
        words = [
            _TYPE_WORDS[t]
            for t in ("int", "float", "bool", "str")
            if t in self.types and not (t == "str" and self.choices)
        ]
        if "int" in self.types and "float" in self.types:
            words.remove("an integer")
        if self.choices:
            words.append("one of " + ", ".join(self.choices))
        words += [f"'{lit}'" for lit in self.literals]
        if "null" in self.types:
            words.append("null")
        return " or ".join(words) or "a value"

    def check(self, value: object, path: KeyPath, ctx: Ctx) -> object:
        """Check the type, choices and bounds; see :meth:`Spec.check`."""
        if value is None:
            if "null" in self.types:
                return None
            ctx.problem(path, f"must be {self.describe()}, not null")
            return self.default()
        if isinstance(value, str) and value in self.literals:
            return value
        if isinstance(value, str) and self.choices is not None:
            if value in self.choices:
                return value
            hint = suggest(value, self.choices) or allowed_hint(self.choices)
            ctx.problem(path, f"unknown value '{value}'", hint=hint)
            return value
        number = self._coerce(value)
        if number is None:
            ctx.problem(path, f"must be {self.describe()}, not {kind_of(value)}", hint=self._hint())
            return value
        if isinstance(number, int | float) and not isinstance(number, bool):
            self._check_bounds(number, path, ctx)
        return number

    def _hint(self) -> str | None:
        return allowed_hint(self.choices) if self.choices else None

    def _coerce(self, value: object) -> object:
        if isinstance(value, bool):
            return value if "bool" in self.types else None
        if isinstance(value, int):
            return value if {"int", "float"} & self.types else None
        if isinstance(value, float):
            if "float" in self.types:
                return value
            if "int" in self.types and value.is_integer():
                return int(value)
            return None
        if isinstance(value, str):
            return value if "str" in self.types and self.choices is None else None
        return None

    def _check_bounds(self, number: float, path: KeyPath, ctx: Ctx) -> None:
        if math.isnan(number):
            ctx.problem(path, "must be a number, not NaN")
            return
        problem = bounds_problem(number, self.bounds)
        if problem is not None:
            ctx.problem(path, problem)


def bounds_problem(number: float, bounds: tuple[float | None, ...]) -> str | None:
    """What is wrong with ``number`` against ``bounds``, or None when it is within them.

    ``bounds`` is ``(ge, gt, le, lt)``, None meaning no bound; the answer reads e.g.
    ``"must be >= 0, got -1"``. NaN compares as within.
    """
    ge, gt, le, lt = bounds
    if ge is not None and number < ge:
        return f"must be >= {ge:g}, got {number:g}"
    if gt is not None and number <= gt:
        return f"must be > {gt:g}, got {number:g}"
    if le is not None and number > le:
        return f"must be <= {le:g}, got {number:g}"
    if lt is not None and number >= lt:
        return f"must be < {lt:g}, got {number:g}"
    return None


class ListOf(Spec):
    """A list whose items follow ``item``; ``length`` fixes its size.

    Args:
        item: The spec every item follows.
        default: The value when the key is absent.
        nullable: Whether null is accepted.
        length: The exact number of items; None for any.
        min_length: The least number of items.
    """

    def __init__(
        self,
        item: Spec,
        default: object = None,
        *,
        nullable: bool = True,
        length: int | None = None,
        min_length: int = 0,
    ) -> None:
        self.item = item
        self._default = default
        self.nullable = nullable
        self.length = length
        self.min_length = min_length

    def default(self) -> object:
        """A copy of the list's default."""
        return copy.deepcopy(self._default)

    def describe(self) -> str:
        """``"a list of <item>"`` (with its length and ``or null`` when they apply)."""
        size = f" of {self.length}" if self.length is not None else ""
        return f"a list{size} of {self.item.describe()}" + (" or null" if self.nullable else "")

    def check(self, value: object, path: KeyPath, ctx: Ctx) -> object:
        """Check the list, its length and every item; see :meth:`Spec.check`."""
        if value is None and self.nullable:
            return None
        if not isinstance(value, list):
            ctx.problem(path, f"must be {self.describe()}, not {kind_of(value)}")
            return value
        if self.length is not None and len(value) != self.length:
            ctx.problem(path, f"must have {self.length} items, has {len(value)}")
        elif len(value) < self.min_length:
            ctx.problem(path, f"must have at least {self.min_length} item(s)")
        return [self.item.check(v, (*path, i), ctx) for i, v in enumerate(value)]


class FreeDict(Spec):
    """Any mapping (or null): a section Ludwig itself does not validate (``backend``, ...).

    Args:
        default: The value when the key is absent.
        nullable: Whether null is accepted.
    """

    def __init__(self, default: object = None, *, nullable: bool = True) -> None:
        self._default = default
        self.nullable = nullable

    def default(self) -> object:
        """A copy of the mapping's default."""
        return copy.deepcopy(self._default)

    def describe(self) -> str:
        """``"a mapping"`` (``or null`` when nullable)."""
        return "a mapping" + (" or null" if self.nullable else "")

    def check(self, value: object, path: KeyPath, ctx: Ctx) -> object:
        """Check that ``value`` is a mapping; its keys are free. See :meth:`Spec.check`."""
        if value is None and self.nullable:
            return None
        if not isinstance(value, Mapping):
            ctx.problem(path, f"must be {self.describe()}, not {kind_of(value)}")
            return value
        return copy.deepcopy(dict(value))


class Section(Spec):
    """A mapping of named fields; unknown keys are errors with a suggestion; defaults fill in.

    Args:
        fields: The spec of each known key.
        nullable: Whether null is accepted.
        fill: False keeps only what was written (per-layer overrides), without defaults.
    """

    def __init__(
        self, fields: Mapping[str, Spec], *, nullable: bool = False, fill: bool = True
    ) -> None:
        self.fields = dict(fields)
        self.nullable = nullable
        self.fill = fill  # False: keep only what was written (per-layer overrides)

    def default(self) -> object:
        """The defaults of every field that has one."""
        return {k: s.default() for k, s in self.fields.items() if s.default() is not MISSING}

    def describe(self) -> str:
        """``"a mapping"``."""
        return "a mapping"

    def check(self, value: object, path: KeyPath, ctx: Ctx) -> Any:
        """Check every known key, report unknown ones, fill in defaults; see :meth:`Spec.check`."""
        if value is None and self.nullable:
            return None
        if value is None:
            return self.default()
        if not isinstance(value, Mapping):
            ctx.problem(path, f"must be a mapping, not {kind_of(value)}")
            return self.default()
        unknown = {str(k): suggest(str(k), self.fields) for k in value if k not in self.fields}
        out: dict[str, object] = {}
        for key, spec in self.fields.items():
            if key in value:
                out[key] = spec.check(value[key], (*path, key), ctx)
            elif not self.fill:
                continue
            elif spec.default() is not MISSING:
                out[key] = spec.default()
            elif f"did you mean '{key}'?" not in unknown.values():
                ctx.problem(path, f"missing required key '{key}'")
            # else: a misspelling of it is reported below, with the fix
        for key, close in unknown.items():
            hint = close or allowed_hint(sorted(self.fields))
            ctx.problem((*path, key), f"unknown key '{key}'", hint=hint, key=True)
        return out
