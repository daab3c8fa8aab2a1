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
        assert point.samples_per_s == pytest.approx(point.value / point.step_s)
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
    for bad in ({}, {"a": []}, {"a": "32"}, {"a": [1], "b": [2]}, {"a": [1, 1]}):
        with pytest.raises(ValueError, match="vary"):
            parse_vary(bad)


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
