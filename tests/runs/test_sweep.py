"""The batch-size sweep on a real config: one pilot per value, the fastest that fits."""

from __future__ import annotations

import html

import pytest

from ludwig_nb.config import ConfigError
from ludwig_nb.runs import estimate
from ludwig_nb.runs.sweep import LEARNING_NOTE, SweepEstimate, SweepPoint, parse_vary
from tests.runs.conftest import ab_config, ab_frame

CONFIG = ab_config("{epochs: 2, batch_size: 32}")


@pytest.fixture(scope="module")
def df():
    return ab_frame(1200, seed=3)


def test_one_pilot_per_value_and_the_schedule_follows_the_batch_size(df):
    sweep = estimate(CONFIG, df, vary={"trainer.batch_size": [16, 64, 128]}, pilot_steps=12)
    assert isinstance(sweep, SweepEstimate) and [p.value for p in sweep.points] == [16, 64, 128]
    rows = 1200 * 7 // 10  # the default 70/10/20 split
    assert [p.steps_per_epoch for p in sweep.points] == [-(-rows // b) for b in (16, 64, 128)]
    for point in sweep.points:
        assert point.fits and point.total_s > 0 and point.epoch_s > 0 and point.epochs == 2
        # the rows the batches held: full batches but each epoch's last (rows % batch)
        held = point.samples_per_s * point.step_s
        assert point.value * 0.5 < held <= point.value and point.note == ""
        assert point.peak_memory is None  # CPU: no allocator peak to report
    assert sweep.fastest is min(sweep.points, key=lambda p: p.total_s)
    frame = sweep.to_frame()
    assert list(frame["trainer.batch_size"]) == [16, 64, 128]
    assert frame["fastest"].sum() == 1
    text = sweep._repr_html_()
    assert "fastest that fits" in text and html.escape(LEARNING_NOTE) in text
    assert "<script" not in text  # survives saving


def test_values_are_checked_before_any_pilot(df):
    with pytest.raises(ConfigError):
        estimate(CONFIG, df, vary={"trainer.batch_size": [32, -4]})
    with pytest.raises(ValueError, match="not a key of this config"):
        estimate(CONFIG, df, vary={"trainer.batch_sise": [32]})


def test_parse_vary_says_what_it_expects():
    assert parse_vary({"trainer.batch_size": (8, 16)}) == ("trainer.batch_size", [8, 16])
    assert parse_vary({"trainer.batch_size": {64, 8}}) == ("trainer.batch_size", [8, 64])
    for bad in ({}, {"a": []}, {"a": "32"}, {"a": [1], "b": [2]}, {"a": [1, 1]}):
        with pytest.raises(ValueError, match="vary"):
            parse_vary(bad)
    with pytest.raises(ValueError, match=r"takes a list of values, e\.g\. .*, not 64$"):
        parse_vary({"trainer.batch_size": 64})
    with pytest.raises(ValueError, match=r"a set of these has no order"):
        parse_vary({"trainer.batch_size": {64, "auto"}})


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (-4, "vary trainer.batch_size=-4: must be >= 1, got -4"),
        (1.5, "vary trainer.batch_size=1.5: must be an integer or one of auto, not a number"),
        ("x", "vary trainer.batch_size='x': unknown value 'x'"),
        (True, "vary trainer.batch_size=True: must be an integer or one of auto"),
    ],
)
def test_a_value_is_refused_by_the_schema_naming_it(df, value, words):
    with pytest.raises(ConfigError) as info:
        estimate(CONFIG, df, vary={"trainer.batch_size": [32, value]})
    assert str(info.value).startswith(words)


def test_a_batch_above_the_rows_is_read_as_the_schema_reads_it_and_rated_by_real_batches():
    rows = 300 * 7 // 10
    sweep = estimate(CONFIG, ab_frame(300), vary={"trainer.batch_size": [16, 1e9]}, pilot_steps=8)
    small, huge = sweep.points
    assert huge.value == 1_000_000_000 and isinstance(huge.value, int)  # 1e9 is an integer
    assert huge.steps_per_epoch == 1 and huge.epochs == 2
    # a batch holds the 210 training rows, not a billion: the rate is theirs
    assert huge.samples_per_s == pytest.approx(rows / huge.step_s)
    assert huge.note == (
        f"1,000,000,000 is more than the {rows} training rows: each batch holds all {rows} "
        f"(as batch_size {rows} would)"
    )
    assert small.steps_per_epoch == -(-rows // 16) and small.note == ""
    assert huge.note in html.unescape(sweep._repr_html_())


def test_a_value_that_does_not_fit_is_marked_and_never_the_fastest():
    points = [
        SweepPoint(64, fits=True, total_s=10.0, epoch_s=5.0, step_s=0.01, samples_per_s=6400),
        SweepPoint(512, fits=False, error="out of memory: CUDA out of memory"),
        SweepPoint(
            256,
            fits=False,
            total_s=4.0,
            peak_memory=150 << 30,
            memory_total=141 << 30,
            error="peak over 95%",
        ),
    ]
    sweep = SweepEstimate("trainer.batch_size", points, "cuda")
    assert sweep.fastest is points[0]
    text = sweep._repr_html_()
    assert text.count("does not fit") == 2 and "CUDA out of memory" in text
