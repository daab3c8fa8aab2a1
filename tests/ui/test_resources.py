"""The end-of-run "resources" line: what the profile measured, and nothing it did not."""

from ludwig_nb.core.state import RunState
from ludwig_nb.ui.charts.curves import CurveData
from ludwig_nb.ui.resources import resources_line
from ludwig_nb.ui.summary import summary_html

SUMMARY = {
    "energy_j": 12_345.0,
    "j_per_sample": 0.41,
    "peak_gpu_memory": 9 << 30,
    "host": {"peak_rss": 410 << 20},
    "peak_temperature": 83.4,
    "throttled_power_s": 3.0,
    "throttled_thermal_s": 0.0,
    "steps_per_s": 51.2,
}


def test_the_line_names_energy_memory_and_throttled_time():
    line = resources_line(SUMMARY)
    assert line.startswith("resources: 12.3 kJ (0.41 J/sample)")
    assert "GPU peak 9.0 GiB" in line and "RSS peak 410.0 MiB" in line
    assert "max 83 °C" in line and "throttled 3 s (power 3 s)" in line
    assert "heat" not in line  # zero seconds by heat is not worth a word


def test_the_per_cause_figures_when_the_profile_has_them():
    throttle = {"text": "throttled 7 % of the run (thermal 5 %, power cap 2 %)", "percent": 7.0}
    line = resources_line({**SUMMARY, "throttle": throttle})
    assert "throttled 7 % of the run (thermal 5 %, power cap 2 %)" in line
    assert "throttled 3 s" not in line


def test_absent_figures_are_left_out():
    line = resources_line({"host": {"peak_rss": 1 << 20}, "energy_j": None})
    assert line == "resources: RSS peak 1.0 MiB"
    assert resources_line({}) == "" and resources_line(None) == ""
    assert resources_line(object()) == ""  # type: ignore[arg-type]  # not a mapping


def test_the_summary_html_carries_the_line():
    state = RunState(run_id="r", name="r", status="completed", started_at=0.0, finished_at=5.0)
    html = summary_html(state, CurveData(), resources=SUMMARY)
    assert "lnb-resources" in html and "12.3 kJ" in html
    assert "lnb-resources" not in summary_html(state, CurveData())
