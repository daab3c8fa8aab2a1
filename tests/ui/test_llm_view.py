"""An LLM run's facts line and generated samples, from its events."""

from __future__ import annotations

from ludwig_nb.core import events as ev
from ludwig_nb.core.state import RunState, reduce_all
from ludwig_nb.ui.llm_view import llm_facts_html, llm_panel_html, samples_html

EVENTS = [
    ev.TokensCounted(
        time=1.0,
        splits={
            "training": {"rows": 700, "tokens": 9100, "longest": 31, "mean": 13.0, "truncated": 2},
            "validation": {"rows": 100, "tokens": 1300, "longest": 30, "mean": 13, "truncated": 1},
        },
        limit=30,
    ),
    ev.ModelDescribed(
        time=1.5,
        base_model="HuggingFaceTB/SmolLM2-135M",
        architecture="llama",
        trainable=921_600,
        total=135_436_608,
        adapter="lora",
        quantization="4-bit",
        estimate_bytes=3 << 30,
    ),
    ev.StepFinished(
        time=2.0,
        step=0,
        epoch=0,
        start_time=1.9,
        batch_size=8,
        loss=2.0,
        tokens=90,
        padded_tokens=120,
    ),
    ev.StepFinished(
        time=2.1,
        step=1,
        epoch=0,
        start_time=2.0,
        batch_size=8,
        loss=1.9,
        tokens=80,
        padded_tokens=96,
    ),
    ev.SamplesGenerated(
        time=3.0,
        step=1,
        split="validation",
        samples=(
            {
                "prompt": "Review: great <b>\nSentiment:",
                "expected": "positive",
                "generated": "positive",
            },
            {"prompt": "Review: dull\nSentiment:", "expected": "negative", "generated": "positive"},
        ),
    ),
]


def test_the_facts_line_names_the_model_parameters_tokens_and_lengths():
    state = reduce_all(EVENTS)
    assert state.tokens_seen == 170 and state.padded_tokens_seen == 216
    text = llm_facts_html(state, gpu_memory_used=2 << 30)
    assert "HuggingFaceTB/SmolLM2-135M" in text and "lora" in text and "4-bit" in text
    assert "922k of 135M parameters train (0.68 %)" in text
    assert "170 tokens trained on" in text
    assert "sequences up to 31 tokens (mean 13), 3 rows cut to 30 tokens" in text
    assert "GPU memory 2.0 GiB of 3.0 GiB estimated" in text


def test_samples_sit_beside_the_expected_answers_escaped():
    table = samples_html(reduce_all(EVENTS))
    assert "after step 2" in table
    assert table.count("<tr>") == 3
    assert "&lt;b&gt;" in table and "<b>" not in table
    assert table.index("✓") < table.index("✗")


def test_a_run_that_is_not_an_llm_shows_nothing():
    assert llm_panel_html(RunState()) == ""
    plain = ev.StepFinished(time=1.0, step=0, epoch=0, start_time=0.5, batch_size=4, loss=1.0)
    assert reduce_all([plain]).tokens_seen == 0


def test_the_text_view_leads_with_tokens_per_second():
    from ludwig_nb.ui.text_view import render_html, render_text

    state = reduce_all(EVENTS[:4])
    line = render_text(state, "1 min", 16.0, (200.0, 300.0))
    assert "200 tokens/s (300 padded) · 16.0 samples/s" in line
    assert "922k of 135M parameters train" in render_html(state, "1 min", 16.0, (200.0, 300.0))


def test_a_full_fine_tune_trains_all_its_parameters():
    described = ev.ModelDescribed(
        time=0.0, base_model="m", architecture="llama", trainable=123_200, total=123_200
    )
    assert "123k of 123k parameters train (100 %)" in llm_facts_html(reduce_all([described]))
