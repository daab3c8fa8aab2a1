"""The profile-cost benchmark keeps running (its figures are printed, never asserted)."""

from benchmarks.profile_cost import _snapshot, callback_cost, end_of_run_cost


def test_the_benchmark_snapshot_sets_every_profiled_field():
    gpu = _snapshot(2, 5.0).gpus[1]
    assert gpu.energy_consumed is not None and gpu.sm_activity is not None
    assert gpu.throttled_power_s == 0.5


def test_callback_and_end_of_run_measure_something():
    assert callback_cost(gpus=2, ticks=20) > 0
    seconds, size = end_of_run_cost(gpus=2, seconds=30)
    assert seconds > 0 and size > 1000
