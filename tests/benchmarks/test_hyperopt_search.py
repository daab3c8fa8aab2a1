"""The hyperopt benchmark keeps running: one tiny search per algorithm (no timing asserted)."""

import itertools
import math

from benchmarks.hyperopt_search import FRACTIONS, _one


def test_one_search_reports_a_best_curve_and_eta_errors(tmp_path):
    result = _one("cars", "optuna", seed=0, trials=4, epochs=1, root=tmp_path)
    curve = result["curve"]
    assert len(curve) == 4 and all(b <= a for a, b in itertools.pairwise(curve))
    assert set(result["eta_errors"]) <= set(FRACTIONS)
    # signed relative errors of the remaining time: a forecast of 0 s is -100 %, never below
    for key in ("eta_errors", "eta_before"):
        assert set(result[key]) <= set(FRACTIONS)
        assert all(math.isfinite(e) and e >= -1.0 for e in result[key].values()), result[key]
