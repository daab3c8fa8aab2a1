"""YAML text -> plain Python data plus the position of every key and value.

PyYAML's ``safe_load`` forgets where things were and silently keeps the last of two duplicate
keys. Here the document is composed into nodes (which carry marks), and the nodes are turned
into data by hand so that every mapping key and every value gets a 1-based (line, column),
keyed by its path (``("trainer", "batch_size")``, ``("input_features", 2, "type")``).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import yaml

from ludwig_nb.config.errors import ConfigError

__all__ = ["KeyPath", "Located", "Positions", "format_path", "parse_yaml"]

KeyPath = tuple[str | int, ...]

# YAML 1.1 (PyYAML) reads "1e-4" as a string; Ludwig users write learning rates that way.
_FLOAT_RE = re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")


# libyaml's parser is ~10x faster than the pure-Python one and keeps the same marks
_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[valid-type,misc]
    """Safe loader that also reads exponent floats without a dot (``1e-4``)."""


_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_RE, list("-+0123456789"))


@dataclasses.dataclass
class Positions:
    """Where each key (``keys``) and each value (``values``) starts.

    Path -> (line, column), both 1-based. ``lines`` holds the document's text lines for error
    display.
    """

    keys: dict[KeyPath, tuple[int, int]] = dataclasses.field(default_factory=dict)
    values: dict[KeyPath, tuple[int, int]] = dataclasses.field(default_factory=dict)
    lines: list[str] = dataclasses.field(default_factory=list)

    def locate(self, path: KeyPath, *, key: bool = False) -> tuple[int, int] | None:
        """Return where ``path`` (or its nearest located parent) was written.

        The position of ``path`` (its key when ``key``), else of its nearest located parent below
        the document root; None when nothing on the path was written.
        """
        table = self.keys if key else self.values
        probe = path
        while probe:  # never the document itself: a missing section has no position
            if probe in table:
                return table[probe]
            if probe in self.values:
                return self.values[probe]
            probe = probe[:-1]
        return None

    def text_of(self, line: int | None) -> str | None:
        """The text of 1-based ``line``, or None when out of range."""
        if line is None or not 1 <= line <= len(self.lines):
            return None
        return self.lines[line - 1]


@dataclasses.dataclass(frozen=True)
class Located:
    """A parsed document: plain data and where its parts were."""

    data: Any
    positions: Positions


def format_path(path: KeyPath) -> str:
    """``("input_features", 2, "encoder", "type")`` -> ``"input_features[2].encoder.type"``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def parse_yaml(text: str) -> Located:
    """Parse one YAML document, keeping positions.

    Raises ``ConfigError`` (located) for: a tab in indentation, a syntax error, duplicate keys,
    non-string or complex keys, an empty document, and a document that is not a mapping.
    """
    lines = text.splitlines()
    positions = Positions(lines=lines)
    _reject_tabs(lines)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, lines) from None
    except yaml.YAMLError as exc:  # unmarked reader errors (e.g. control characters)
        raise ConfigError(f"YAML error: {exc}") from None
    finally:
        loader.dispose()
    if node is None or (_is_null(node)):
        raise ConfigError(
            "the config is empty",
            hint="start with 'input_features:' and 'output_features:'",
        )
    if not isinstance(node, yaml.MappingNode):
        line, col = _mark(node)
        raise ConfigError(
            f"the config must be a mapping of sections, not a {_node_kind(node)}",
            line=line,
            column=col,
            source_line=positions.text_of(line),
            hint="e.g. 'input_features: [...]' and 'output_features: [...]' at the top level",
        )
    problems: list[ConfigError] = []
    data = _Builder(loader, positions, problems).build(node, ())
    if problems:
        raise ConfigError.collect(problems)
    return Located(data, positions)


def _reject_tabs(lines: list[str]) -> None:
    problems = []
    for number, line in enumerate(lines, start=1):
        indent = len(line) - len(line.lstrip(" \t"))
        tab = line.find("\t", 0, indent)
        if tab >= 0:
            problems.append(
                ConfigError(
                    "tab character in indentation (YAML indents with spaces only)",
                    line=number,
                    column=tab + 1,
                    source_line=line,
                    hint="replace the tab with spaces",
                )
            )
    if problems:
        raise ConfigError.collect(problems)


def _syntax_error(exc: yaml.MarkedYAMLError, lines: list[str]) -> ConfigError:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or "invalid YAML"
    context = f" ({exc.context})" if exc.context else ""
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    source = lines[line - 1] if line is not None and 1 <= line <= len(lines) else None
    if line is not None and line > len(lines) and lines:  # end of stream: point at the last line
        line, source = len(lines), lines[-1]
        column = len(source) + 1
    return ConfigError(
        f"YAML syntax error: {problem}{context}", line=line, column=column, source_line=source
    )


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _node_kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.SequenceNode):
        return "list"
    return "single value"


class _Builder:
    """Turns composed nodes into data, recording positions and structural problems."""

    def __init__(self, loader: _Loader, positions: Positions, problems: list[ConfigError]):
        self._loader = loader
        self._positions = positions
        self._problems = problems

    def build(self, node: yaml.Node, path: KeyPath) -> object:
        self._positions.values[path] = _mark(node)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self._scalar(node, path)

    def _scalar(self, node: yaml.Node, path: KeyPath) -> object:
        try:
            return self._loader.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError):
            # an explicit tag the text does not fit, e.g. "!!int abc"
            line, col = _mark(node)
            self._problems.append(
                ConfigError(
                    f"cannot read {node.value!r} as {node.tag.rsplit(':', 1)[-1]}",
                    line=line,
                    column=col,
                    path=format_path(path),
                    source_line=self._positions.text_of(line),
                    hint="remove the '!!' tag or fix the value",
                )
            )
            return None

    def _mapping(self, node: yaml.MappingNode, path: KeyPath) -> dict[str, object]:
        self._loader.flatten_mapping(node)  # resolves "<<: *anchor" merge keys
        out: dict[str, object] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node, path)
            if key is None:
                continue
            if key in out:
                self._duplicate(key_node, key, path)
                continue
            self._positions.keys[(*path, key)] = _mark(key_node)
            out[key] = self.build(value_node, (*path, key))
            if isinstance(value_node, yaml.CollectionNode) and not value_node.flow_style:
                # a block section starts on the next line; its key line reads better
                self._positions.values[(*path, key)] = _mark(key_node)
        return out

    def _key(self, key_node: yaml.Node, path: KeyPath) -> str | None:
        value = self._scalar(key_node, path) if isinstance(key_node, yaml.ScalarNode) else None
        if isinstance(value, str) or (value is not None and isinstance(value, int | float)):
            # numeric/bool keys are kept as text: Ludwig keys are names
            return value if isinstance(value, str) else str(key_node.value)
        line, col = _mark(key_node)
        self._problems.append(
            ConfigError(
                "a key must be a plain name",
                line=line,
                column=col,
                path=format_path(path),
                source_line=self._positions.text_of(line),
            )
        )
        return None

    def _duplicate(self, key_node: yaml.Node, key: str, path: KeyPath) -> None:
        line, col = _mark(key_node)
        first = self._positions.keys.get((*path, key))
        earlier = f" (first on line {first[0]})" if first else ""
        self._problems.append(
            ConfigError(
                f"duplicate key '{key}'{earlier}",
                line=line,
                column=col,
                path=format_path((*path, key)),
                source_line=self._positions.text_of(line),
                hint="YAML would silently keep only the last one; remove one of them",
            )
        )
