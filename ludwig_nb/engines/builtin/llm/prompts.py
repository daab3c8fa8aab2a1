"""Ludwig's prompt templates: the text an LLM reads for each row.

As Ludwig 0.11 builds it (``ludwig/data/prompt.py``): ``prompt.template`` is a Python format
string whose fields are dataset columns, ``{__sample__}`` (the input feature's text) and
``{__task__}`` (``prompt.task``); a ``{name:.2f}`` field formats a number. With a task and no
template, Ludwig's zero-shot template is used; with neither, the input text is the prompt.
"""

from __future__ import annotations

import json
import math
import string
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

__all__ = [
    "DEFAULT_ZERO_SHOT_TEMPLATE",
    "SAMPLE",
    "TASK",
    "build_prompts",
    "check_template",
    "template_columns",
]

SAMPLE = "__sample__"
TASK = "__task__"
CONTEXT = "__context__"

#: Ludwig 0.11's template when only ``prompt.task`` is given
DEFAULT_ZERO_SHOT_TEMPLATE = """SAMPLE INPUT: {__sample__}

USER: Complete the following task: {__task__}

ASSISTANT:
"""


def _template(prompt: Mapping[str, Any]) -> str | None:
    template = prompt.get("template")
    if template is None and prompt.get("task") is not None:
        return DEFAULT_ZERO_SHOT_TEMPLATE
    return str(template) if template is not None else None


def _fields(template: str) -> dict[str, type]:
    """Field name -> the type its value is cast to (float for a ``.2f`` spec, else str).

    Raises ``ValueError`` for a malformed template or a format spec other than a float's.
    """
    out: dict[str, type] = {}
    for _, name, spec, _ in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier():
            raise ValueError(f"the template field {{{name}}} is not a column name")
        if spec and "f" not in spec:
            raise ValueError(f"the template field {{{name}:{spec}}}: only float specs (.2f)")
        out[name] = float if spec else str
    return out


def template_columns(prompt: Mapping[str, Any]) -> list[str]:
    """The dataset columns the prompt reads (not ``__sample__``/``__task__``)."""
    template = _template(prompt)
    if template is None:
        return []
    return [f for f in _fields(template) if f not in (SAMPLE, TASK, CONTEXT)]


def check_template(prompt: Mapping[str, Any], input_name: str, columns: Sequence[str]) -> None:
    """Raise ``ValueError`` (a sentence for the user) when the template cannot be filled.

    Ludwig's rules: a task needs ``{__task__}``; the template needs ``{__sample__}`` or a
    column; every column it names must be in the dataset.
    """
    template = _template(prompt)
    if template is None:
        return
    fields = _fields(template)
    if prompt.get("task") is not None and TASK not in fields:
        raise ValueError("prompt.template must contain {__task__} when prompt.task is set")
    if CONTEXT in fields:
        raise ValueError("{__context__} needs prompt.retrieval (few-shot), which is not built")
    named = [f for f in fields if f not in (SAMPLE, TASK)]
    if SAMPLE not in fields and not named:
        raise ValueError(
            f"prompt.template names no column: add {{{input_name}}} or {{__sample__}} "
            f"(the input feature's text)"
        )
    missing = [f for f in named if f not in columns]
    if missing:
        raise ValueError(f"prompt.template names column {missing[0]!r}, which the data lacks")


def build_prompts(frame: pd.DataFrame, prompt: Mapping[str, Any], input_name: str) -> list[str]:
    """The prompt text of every row of ``frame`` (raises as :func:`check_template`)."""
    template = _template(prompt)
    texts = frame[input_name].map(_text)
    if template is None:
        return list(texts)
    check_template(prompt, input_name, [str(c) for c in frame.columns])
    fields = _fields(template)
    columns: dict[str, list[Any]] = {}
    for name, cast in fields.items():
        if name == SAMPLE:  # Ludwig writes the sample as JSON, quotes stripped
            columns[name] = [json.dumps(t, indent=2).strip('"') for t in texts]
        elif name == TASK:
            columns[name] = [prompt.get("task")] * len(frame)
        else:
            values = frame[name].map(_text) if cast is str else frame[name].astype(float)
            columns[name] = list(values)
    return [
        template.format(**{name: columns[name][i] for name in fields}) for i in range(len(frame))
    ]


def _text(value: Any) -> str:
    """A cell as text; a missing cell is the empty string (Ludwig's ``fill_value: ""``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)
