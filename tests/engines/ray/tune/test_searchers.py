"""The search algorithm carries the trials-at-once limit itself (marker ``ray``: Tune's
classes; no Ray is started). Tune 2.60 ignores ``max_concurrent_trials`` for a variant
generator, which ran a search's trials one after the other."""

from __future__ import annotations

from pathlib import Path

import pytest

from ludwig_nb.engines.search_backend import TuneSpec

pytestmark = pytest.mark.ray

PARAMETERS = {"trainer.learning_rate": {"space": "loguniform", "lower": 0.001, "upper": 0.1}}


def _spec(kind: str) -> TuneSpec:
    return TuneSpec(
        name="s",
        directory=Path("."),
        parameters=PARAMETERS,
        search_alg={"type": kind},
        scheduler={},
        goal="minimize",
        metric_path=("validation", "combined", "loss"),
        num_samples=4,
        points=[{"trainer.learning_rate": 0.01}],
        evaluated=[],
        grid=None,
        max_concurrent=None,
        cpus=1.0,
        gpus=0.0,
        dataset=None,
        max_t=3,
    )


def test_random_search_is_a_variant_generator_limited_to_the_slots():
    from ray.tune.search.basic_variant import BasicVariantGenerator

    from ludwig_nb.engines.ray.tune.searchers import search_algorithm

    found = search_algorithm(_spec("random"), 2)
    assert isinstance(found, BasicVariantGenerator) and found.max_concurrent == 2


def test_tpe_is_optuna_in_a_concurrency_limiter():
    pytest.importorskip("optuna")
    from ray.tune.search import ConcurrencyLimiter
    from ray.tune.search.optuna import OptunaSearch

    from ludwig_nb.engines.ray.tune.searchers import search_algorithm

    found = search_algorithm(_spec("optuna"), 3)
    assert isinstance(found, ConcurrencyLimiter) and found.max_concurrent == 3
    assert isinstance(found.searcher, OptunaSearch)
