"""The time-to-dashboard benchmark's summary: medians per case against the 1 s goals."""

from benchmarks.time_to_dashboard import _against_goal, summarize


def test_each_figure_is_printed_against_its_goal():
    assert _against_goal(0.42) == "0.42 s (goal <= 1.0 s: met)"
    assert _against_goal(2.5) == "2.50 s (goal <= 1.0 s: NOT met, 2.5x the goal)"
    assert _against_goal(None).startswith("none")


def test_first_and_later_runs_are_summarized_apart(capsys):
    def row(line, dashboard, first, ready=0.5):
        return {
            "first output": line,
            "dashboard": dashboard,
            "first step": first,
            "kernel ready": ready,
            "from launch": ready + 0.1 + first,
        }

    kernels = [
        [row(0.2, 0.9, 4.0, 0.4), row(0.01, 0.1, 0.5)],
        [row(0.4, 1.1, 6.0, 0.6), row(0.03, 0.3, 0.7)],
        [row(0.3, 0.8, 5.0, 0.5), row(0.02, 0.2, 0.6)],
    ]
    summarize("Run All", kernels)
    out = capsys.readouterr().out
    first, later = out.split("later runs")
    assert "first run (median of 3)" in first
    assert "dashboard    0.90 s (goal <= 1.0 s: met)" in first
    assert "first step   5.00 s (goal <= 1.0 s: NOT met, 5.0x the goal)" in first
    # the kernel's start and the first step from its launch: beside the first run only
    assert "kernel ready 0.50 s" in first and "from launch  5.60 s" in first
    assert "(median of 3)" in later and "first step   0.60 s (goal <= 1.0 s: met)" in later
    assert "kernel ready" not in later
