"""A search's SVG views: every trial's curve with the best in red, best so far, parameters."""

import re

from ludwig_nb.ui.charts.search import STATE_COLORS, best_so_far_svg, curves_svg, parallel_svg
from tests.ui.test_search_panel import FakeSearch

PARAMETERS = ["trainer.learning_rate", "combiner.output_size"]


def _polylines(svg: str) -> list[str]:
    return re.findall(r"<polyline [^>]*>", svg)


def test_each_trial_is_a_curve_in_its_states_colour_and_the_best_is_red():
    records = FakeSearch().records()
    svg = curves_svg(records, best=2, metric="combined.loss")
    lines = _polylines(svg)
    assert len(lines) == 4 and "(best in red)" in svg
    assert sum('stroke="#d62728"' in line for line in lines) == 1  # the best trial's
    assert any(f'stroke="{STATE_COLORS["pruned"]}"' in line for line in lines)
    assert "evaluation 3" in svg  # the x axis runs to the longest curve


def test_best_so_far_steps_down_through_the_completed_trials_only():
    svg = best_so_far_svg(FakeSearch().records(), goal="minimize")
    (line,) = _polylines(svg)
    points = [tuple(map(float, p.split(","))) for p in re.findall(r"[\d.]+,[\d.]+", line)]
    # two completed trials (0.30, then 0.20): across at the first best, then down to the new
    (x0, y0), (x1, y1), (x2, y2) = points
    assert x1 > x0
    assert y1 == y0 and x2 == x1 and y2 > y0  # a lower metric is drawn lower
    assert svg.count("<circle") == 2


def test_parallel_coordinates_have_an_axis_per_parameter_and_the_metric():
    svg = parallel_svg(FakeSearch().records(), PARAMETERS, best=2)
    assert svg.count('stroke="#ccc"') == 3  # two parameters and the metric
    assert "trainer.learning_rate" in svg and "combiner.output_size" in svg
    assert len(_polylines(svg)) == 4  # every trial with a metric


def test_without_data_each_view_says_so():
    assert "no evaluation yet" in curves_svg([], None, "loss")
    assert "no completed trial yet" in best_so_far_svg([], "minimize")
    assert "no trial with a metric yet" in parallel_svg([], PARAMETERS, None)
