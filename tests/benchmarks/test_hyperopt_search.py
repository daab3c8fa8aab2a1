"""The hyperopt benchmark keeps running: one tiny search per algorithm (no timing asserted)."""

import itertools

from benchmarks.hyperopt_search import FRACTIONS, _one


def test_one_search_reports_a_best_curve_and_eta_errors(tmp_path):
    result = _one("cars", "optuna", seed=0, trials=4, epochs=1, root=tmp_path)
    curve = result["curve"]
    assert len(curve) == 4 and all(b <= a for a, b in itertools.pairwise(curve))
    assert set(result["eta_errors"]) <= set(FRACTIONS)
    assert all(e >= 0 for e in result["eta_errors"].values())
