from __future__ import annotations

import pandas as pd
import pytest

from ludwig_nb.engines.builtin.llm.prompts import (
    DEFAULT_ZERO_SHOT_TEMPLATE,
    build_prompts,
    check_template,
    template_columns,
)

FRAME = pd.DataFrame({"review": ["good film", None], "stars": [4.256, 1.0], "label": ["a", "b"]})


def test_a_template_fills_columns_and_formats_numbers():
    prompt = {"template": "R: {review} ({stars:.1f})"}
    assert build_prompts(FRAME, prompt, "review") == ["R: good film (4.3)", "R:  (1.0)"]
    assert template_columns(prompt) == ["review", "stars"]


def test_a_task_alone_takes_ludwigs_zero_shot_template():
    out = build_prompts(FRAME, {"task": "sentiment"}, "review")
    assert out[0] == DEFAULT_ZERO_SHOT_TEMPLATE.format(__sample__="good film", __task__="sentiment")


def test_no_template_is_the_input_text():
    assert build_prompts(FRAME, {}, "review") == ["good film", ""]


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        ({"template": "R: {missing}"}, "names column 'missing'"),
        ({"template": "no fields"}, "names no column"),
        ({"template": "{review}", "task": "t"}, "must contain {__task__}"),
        ({"template": "{__context__} {review}"}, "few-shot"),
        ({"template": "{stars:d}"}, "only float specs"),
    ],
)
def test_templates_that_cannot_be_filled_say_why(prompt, message):
    with pytest.raises(ValueError, match=message):
        check_template(prompt, "review", list(FRAME.columns))
