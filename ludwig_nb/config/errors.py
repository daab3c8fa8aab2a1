"""Located config errors: what went wrong, where (1-based line and column, key path), and a fix.

A ``ConfigError`` carries every problem found in one pass (``errors``); each item is itself a
``ConfigError`` with the same attributes. ``str(err)`` is short and written for people: the line,
the key path, the message, the offending YAML line with a caret under the spot, and a hint.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MAX_LISTED", "ConfigError", "ConfigWarning", "UnsupportedByEngine"]

#: how many problems ``str(err)`` lists before "... and N more"
MAX_LISTED = 8


class ConfigError(ValueError):
    """A config mistake, located.

    Attributes: ``message`` (what is wrong), ``line`` / ``column`` (1-based, in the YAML text;
    ``None`` where no position exists, e.g. a dict source or a missing top-level section),
    ``path`` (``"trainer.batch_size"``, ``"input_features[2].encoder.type"``; ``""`` for the
    document), ``hint`` (``"did you mean 'batch_size'?"`` or the allowed values, or ``None``),
    ``source_line`` (the text of the offending line, for the caret display) and ``errors``
    (every problem found; a single error lists itself).
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        path: str = "",
        hint: str | None = None,
        source_line: str | None = None,
        errors: Sequence[ConfigError] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.path = path
        self.hint = hint
        self.source_line = source_line
        self.errors: list[ConfigError] = list(errors) if errors else [self]

    @classmethod
    def collect(cls, problems: Sequence[ConfigError]) -> ConfigError:
        """One error that holds ``problems`` (at least one); it takes the first one's location.

        If every problem is an ``UnsupportedByEngine``, the result is one too, so that callers
        can tell "valid Ludwig, wrong engine" from "invalid config".
        """
        if not problems:
            raise ValueError("ConfigError.collect needs at least one problem")
        if len(problems) == 1:
            return problems[0]
        first = problems[0]
        kind: type[ConfigError] = ConfigError
        if all(isinstance(p, UnsupportedByEngine) for p in problems):
            kind = UnsupportedByEngine
        return kind._aggregate(first, problems)

    @classmethod
    def _aggregate(cls, first: ConfigError, problems: Sequence[ConfigError]) -> ConfigError:
        err = cls(
            f"{len(problems)} problems in the config",
            line=first.line,
            column=first.column,
            path=first.path,
            hint=first.hint,
            source_line=first.source_line,
            errors=problems,
        )
        if isinstance(err, UnsupportedByEngine) and isinstance(first, UnsupportedByEngine):
            err.engine = first.engine
        return err

    def shifted(self, lines: int) -> ConfigError:
        """Return a copy with every line number moved down by ``lines``.

        A copy with every line number moved down by ``lines`` (e.g. 1 for a cell magic whose YAML
        starts on the cell's second line). Positionless problems stay positionless.
        """
        moved = [_shift_one(p, lines) for p in self.errors]
        if len(self.errors) == 1 and self.errors[0] is self:
            return moved[0]
        return type(self)._aggregate(moved[0], moved)

    def __str__(self) -> str:
        if len(self.errors) == 1:
            return _render_one(self.errors[0])
        shown = [_render_one(p) for p in self.errors[:MAX_LISTED]]
        more = len(self.errors) - MAX_LISTED
        tail = [f"... and {more} more"] if more > 0 else []
        return "\n".join([f"{len(self.errors)} problems in the config:", *shown, *tail])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, line={self.line}, path={self.path!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # keyword-only __init__: pickle (multiprocessing, Ray) needs to be told how to rebuild
        return (_rebuild, (type(self), self.__dict__.copy()))


class UnsupportedByEngine(ConfigError):
    """A valid Ludwig config that the chosen engine cannot run; ``engine`` names one that can.

    Args:
        message: What the engine cannot run, in words.
        engine: The engine that can run it.
        **kwargs: The location, as for :class:`ConfigError` (``line``, ``column``, ``path``, ...).
    """

    def __init__(self, message: str, *, engine: str = "ludwig", **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.engine = engine


class ConfigWarning(UserWarning):
    """A config that Ludwig accepts but that deserves a word, located like a ``ConfigError``.

    Old syntax that was upgraded (``training:`` -> ``trainer:``), or a key that does nothing (Ludwig
    accepts it and ignores it). ``str(w)`` reads like one ``ConfigError``.

    Args:
        message: What deserves a word.
        line: 1-based line of the key in the YAML source; None for a dict source.
        column: 1-based column of the key; None when unknown.
        path: The dotted key path, e.g. ``trainer.epochs``.
        hint: What to write instead; None without a suggestion.
        source_line: The YAML line as written, shown under the message.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        path: str = "",
        hint: str | None = None,
        source_line: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.path = path
        self.hint = hint
        self.source_line = source_line

    def shifted(self, lines: int) -> ConfigWarning:
        """A copy with its line moved down by ``lines`` (see ``ConfigError.shifted``)."""
        line = None if self.line is None else self.line + lines
        return ConfigWarning(
            self.message,
            line=line,
            column=self.column,
            path=self.path,
            hint=self.hint,
            source_line=self.source_line,
        )

    def __str__(self) -> str:
        return _render_one(self)

    def __repr__(self) -> str:
        return f"ConfigWarning({self.message!r}, line={self.line}, path={self.path!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_warning, (self.__dict__.copy(),))


def _rebuild_warning(state: dict[str, object]) -> ConfigWarning:
    note = ConfigWarning.__new__(ConfigWarning)
    UserWarning.__init__(note, state.get("message", ""))
    note.__dict__.update(state)
    return note


def _rebuild(kind: type[ConfigError], state: dict[str, object]) -> ConfigError:
    err = kind.__new__(kind)
    ValueError.__init__(err, state.get("message", ""))
    err.__dict__.update(state)
    return err


def _shift_one(problem: ConfigError, lines: int) -> ConfigError:
    copy = _rebuild(type(problem), problem.__dict__.copy())
    if copy.line is not None:
        copy.line += lines
    copy.errors = [copy]
    return copy


def _render_one(problem: ConfigError | ConfigWarning) -> str:
    where = [f"line {problem.line}"] if problem.line is not None else []
    where += [problem.path] if problem.path else []
    head = f"{', '.join(where)}: {problem.message}" if where else problem.message
    parts = [head]
    if problem.source_line is not None and problem.column is not None:
        text = problem.source_line.rstrip("\n")
        parts.append(f"    {text}")
        parts.append("    " + " " * (problem.column - 1) + "^")
    if problem.hint:
        parts.append(f"  {problem.hint}")
    return "\n".join(parts)
