"""The static summary: metrics, inline SVG curves, timing against the first ETA, failures."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

from ludwig_nb.core import events as ev
from ludwig_nb.core.state import reduce_all
from ludwig_nb.core.status_words import status_words
from ludwig_nb.ui.charts.curves import CurveData
from ludwig_nb.ui.charts.svg import svg_line_chart
from ludwig_nb.ui.summary import metrics_table_html, summary_html, summary_mimebundle, summary_text
from tests.ui.conftest import T0, FakeRun, evaluation, started, steps


def _finished_run() -> tuple[list[ev.Event], CurveData]:
    run = FakeRun()
    events: list[ev.Event] = [
        started(run),
        *steps(0, 50, T0),
        evaluation(49, T0 + 5.5, 0.8, 0.6),
        *steps(50, 50, T0 + 6),
        evaluation(99, T0 + 11.5, 0.9123, 0.4),
        ev.RunFinished(time=T0 + 12, status="completed", step=100),
    ]
    curves = CurveData()
    for event in events:
        curves.observe(event)
    return events, curves


def test_summary_has_metrics_svg_and_eta_comparison() -> None:
    events, curves = _finished_run()
    state = reduce_all(events)
    html = summary_html(state, curves, first_finish=T0 + 10, directory="/r/demo")
    assert 'data-status="completed"' in html
    assert "0.9123" in html and "accuracy" in html and "validation" in html
    assert html.count("<svg") == 2 and "polyline" in html
    assert "took 12 s · first ETA said 10 s: finished 2 s later" in html
    assert "/r/demo" in html
    for svg in html.split("<svg")[1:]:  # each chart is well-formed XML
        ET.fromstring("<svg" + svg.split("</svg>")[0] + "</svg>")


def test_summary_charts_name_their_metric_on_the_y_axis() -> None:
    """Each chart's y axis says what it shows (the metric's name), its title names the output
    feature, its legend the splits; both are drawn at the live charts' size."""
    events, curves = _finished_run()
    html = summary_html(reduce_all(events), curves)
    ns = "{http://www.w3.org/2000/svg}"
    charts = [
        ET.fromstring("<svg" + s.split("</svg>")[0] + "</svg>") for s in html.split("<svg")[1:]
    ]

    def texts(root: ET.Element, cls: str) -> list[str]:
        return [t.text or "" for t in root.iter(f"{ns}text") if cls in (t.get("class") or "")]

    (loss, metric) = charts
    assert texts(loss, "lnb-y-label") == ["loss"] and texts(loss, "lnb-title") == ["loss"]
    assert texts(metric, "lnb-y-label") == ["accuracy"]
    assert texts(metric, "lnb-title") == [curves.metric_label] and "accuracy" in curves.metric_label
    legend = [g.find(f"{ns}text") for g in metric.iter(f"{ns}g")]
    assert "validation" in [t.text for t in legend if t is not None]
    for chart in charts:
        assert float(chart.get("width") or 0) >= 440 and float(chart.get("height") or 0) >= 260
        assert float(chart.get("font-size") or 0) >= 12
        (label,) = [t for t in chart.iter(f"{ns}text") if t.get("class") == "lnb-y-label"]
        assert "rotate(-90" in (label.get("transform") or "")


def test_failed_summary_is_red_with_traceback() -> None:
    events, curves = _finished_run()
    failed = [
        *events[:-1],
        ev.RunFailed(time=T0 + 12, step=100, error_type="ValueError", message="bad label"),
    ]
    html = summary_html(reduce_all(failed), curves, traceback_text="Traceback: here")
    assert "#c62828" in html and "ValueError: bad label" in html
    assert "<details" in html and "Traceback: here" in html
    assert "failed" in summary_text(reduce_all(failed))


def test_summary_text_and_bundle() -> None:
    events, _ = _finished_run()
    state = reduce_all(events)
    text = summary_text(state)
    assert text.startswith("demo: completed, step 100 / 100")
    assert "took 12 s" in text
    # the sidebar says the same words: status.json's took_text
    assert status_words(state, None)["took_text"] == "took 12 s"
    assert text.endswith(
        "\nbest evaluation (step 100): validation label accuracy=0.9123, validation loss=0.4"
    )
    bundle = summary_mimebundle("<b>x</b>", state)
    assert bundle == {"text/html": "<b>x</b>", "text/plain": text}


def _with_baseline(events: list[ev.Event], accuracy: float) -> list[ev.Event]:
    baseline = ev.BaselineComputed(
        time=T0,
        metrics={"validation": {"label": {"accuracy": accuracy}}},
        predictors={"label": "always 'no'"},
    )
    return [events[0], baseline, *events[1:]]


def test_summary_shows_the_trivial_baseline_beside_the_metrics() -> None:
    events, curves = _finished_run()
    state = reduce_all(_with_baseline(events, 0.5))
    text = summary_text(state)
    assert text.endswith(
        "best evaluation (step 100): validation label accuracy 0.9123 · always 'no': 0.5"
    )
    html = summary_html(state, curves)
    assert "trivial baseline (validation)" in html
    assert "always &#x27;no&#x27;: 0.5" in html
    assert 'data-verdict="better"' in html


def test_summary_warns_when_the_model_is_no_better_than_the_baseline() -> None:
    events, curves = _finished_run()
    state = reduce_all(_with_baseline(events, 0.91))
    assert "⚠ barely better than the baseline" in summary_text(state)
    assert 'data-verdict="barely better"' in summary_html(state, curves)
    worse = reduce_all(_with_baseline(events, 0.95))
    assert "⚠ no better than the baseline" in summary_text(worse)


def test_summary_says_why_an_early_stopped_run_ended() -> None:
    events, curves = _finished_run()
    finished = dataclasses.replace(events[-1], reason="early stopping")  # type: ignore[arg-type]
    extra = evaluation(99, T0 + 11.8, 0.85, 0.5)  # no improvement after the best
    state = reduce_all([*events[:-1], dataclasses.replace(extra, improved=False), finished])
    assert "stopped early: no validation improvement in 1 evaluation; best at step 100" in (
        summary_text(state)
    )
    assert "stopped early" in summary_html(state, curves)


def test_metrics_table() -> None:
    html = metrics_table_html({"validation": {"y": {"loss": 0.5}}, "test": {"y": {"loss": 0.6}}})
    assert "<th>validation</th><th>test</th>" in html
    assert "<td>y</td><td>loss</td><td>0.5</td><td>0.6</td>" in html
    assert metrics_table_html({}) == ""


def test_svg_chart_log_scale_and_empty() -> None:
    svg = svg_line_chart({"train": ([1, 2, 3], [10.0, 1.0, 0.1])}, title="loss", log=True)
    assert "(log y)" in svg and ">10<" in svg and ">0.1<" in svg
    assert "no data" in svg_line_chart({"train": ([], [])})
    one = svg_line_chart({"validation": ([5], [0.3])})
    assert "<circle" in one
    state = dataclasses.replace(reduce_all(_finished_run()[0]), best_metrics={})
    assert "latest evaluation" in summary_html(state, CurveData())


def test_svg_chart_has_round_ticks_inside_and_the_legend_under_the_plot() -> None:
    xs = list(range(1, 2586))
    svg = svg_line_chart(
        {"train": (xs, [1 / x for x in xs]), "validation": ([500, 1000, 2585], [0.3, 0.2, 0.25])},
        title="loss",
    )
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    width, height = float(root.get("width")), float(root.get("height"))
    ticks = [t for t in root.iter(f"{ns}text") if "lnb-tick" in (t.get("class") or "")]
    x_ticks = [t.text for t in ticks if "lnb-x-tick" in t.get("class")]
    assert x_ticks == ["0", "1,000", "2,000"]  # round, from 0, the last label not clipped
    for tick in ticks:
        float(tick.text.replace(",", ""))  # a number
        assert 0 <= float(tick.get("x")) <= width and 0 <= float(tick.get("y")) <= height
    (plot,) = [r for r in root.iter(f"{ns}rect") if r.get("class") == "lnb-plot-area"]
    plot_bottom = float(plot.get("y")) + float(plot.get("height"))
    legend = [g for g in root.iter(f"{ns}g") if g.get("class") == "lnb-legend-item"]
    assert [g.find(f"{ns}text").text for g in legend] == ["train (raw)", "validation"]
    assert all(float(g.find(f"{ns}rect").get("y")) > plot_bottom + 20 for g in legend)


def test_an_r2_axis_stops_at_1_and_a_loss_axis_at_0() -> None:
    """r2 never exceeds 1: its axis must not run to +5 when values span -20 to 0.9."""
    curves = {"validation": ([1, 2, 3, 4], [-20.0, -3.0, 0.5, 0.9])}
    ns = "{http://www.w3.org/2000/svg}"

    def y_ticks(svg: str) -> list[float]:
        root = ET.fromstring(svg)
        texts = [
            t.text or "" for t in root.iter(f"{ns}text") if "lnb-y-tick" in (t.get("class") or "")
        ]
        return [float(t.replace(",", "").replace("−", "-")) for t in texts]

    unbounded = y_ticks(svg_line_chart(curves, title="r2"))
    assert max(unbounded) > 1  # what the axis did without the metric's range
    bounded = y_ticks(svg_line_chart(curves, title="r2", y_bounds=(None, 1.0)))
    assert max(bounded) <= 1.0 and min(bounded) <= -20
    losses = {"validation": ([1, 2], [0.02, 0.4])}
    assert min(y_ticks(svg_line_chart(losses, y_bounds=(0.0, None)))) >= 0.0


def test_summary_shows_the_end_of_run_warnings_and_the_auto_batch_size() -> None:
    events, curves = _finished_run()
    note = "batch_size auto: 64 (why); pin it with trainer.batch_size: 64"
    run_started = events[0]
    assert isinstance(run_started, ev.RunStarted)
    schedule = dataclasses.replace(run_started.schedule, batch_size=64, batch_note=note)
    warning = "label: best by roc_auc at epoch 5; set `trainer.validation_metric: loss`"
    finished = dataclasses.replace(events[-1], warnings=(warning,))  # type: ignore[arg-type]
    state = reduce_all(
        [dataclasses.replace(run_started, schedule=schedule), *events[1:-1], finished]
    )
    text = summary_text(state)
    assert f"⚠ {warning}" in text and note in text
    page = summary_html(state, curves)
    assert 'class="lnb-warning"' in page and "best by roc_auc at epoch 5" in page
    assert 'class="lnb-batch-note"' in page


def test_the_header_shows_the_batch_size_and_why_on_hover() -> None:
    from ludwig_nb.ui.formatting import header_html

    events, _ = _finished_run()
    state = reduce_all(events[:1])
    assert "batch 32" in header_html(state) and "(auto)" not in header_html(state)
    noted = dataclasses.replace(state, batch_note="batch_size auto: 32 (why)")
    assert 'title="batch_size auto: 32 (why)"' in header_html(noted)
    assert "batch 32 (auto)" in header_html(noted)
