"""Ludwig's ``search_alg`` as a Tune search algorithm that runs ``limit`` trials at once.

Tune's ``max_concurrent_trials`` is not used: Ray 2.60 ignores it for a
``SearchGenerator`` such as the random variant generator (it logs so and runs as many as
fit), and for a plain ``Searcher`` it would wrap what is wrapped here already. The random
search is a ``BasicVariantGenerator`` with ``max_concurrent``; Optuna's TPE is an
``OptunaSearch`` in a ``ConcurrencyLimiter``, which also sets how many trials Tune keeps
pending (without one, Tune keeps one pending trial for a custom searcher).
"""

from __future__ import annotations

import contextlib
from typing import Any

from ludwig_nb.engines.ray.tune.space import encode
from ludwig_nb.engines.search_backend import TuneSpec

__all__ = ["search_algorithm"]


def search_algorithm(spec: TuneSpec, limit: int) -> Any:
    """The experiment's search algorithm, running at most ``limit`` trials at once."""
    kind = spec.search_alg.get("type", "random")
    points = [
        encode(spec.parameters, p) for p in (spec.grid if spec.grid is not None else spec.points)
    ]
    if kind == "optuna":
        from ray.tune.search import ConcurrencyLimiter

        return ConcurrencyLimiter(_optuna_search(spec, points), max_concurrent=limit)
    from ray.tune.search.basic_variant import BasicVariantGenerator

    return BasicVariantGenerator(
        points_to_evaluate=points or None, random_state=spec.seed, max_concurrent=limit
    )


def _optuna_search(spec: TuneSpec, points: list[dict[str, Any]]) -> Any:
    """Tune's OptunaSearch (TPE), told the finished trials once Tune gives it the space."""
    import optuna
    from ray.tune.search.optuna import OptunaSearch

    startup = int(spec.search_alg.get("n_startup_trials", 3))
    finished = [(encode(spec.parameters, p), v, s) for p, v, s in spec.evaluated]

    class _Told(OptunaSearch):  # type: ignore[misc]
        def set_search_properties(self, metric: Any, mode: Any, config: Any, **more: Any) -> bool:
            ok: bool = super().set_search_properties(metric, mode, config, **more)
            for params, value, state in finished:
                with contextlib.suppress(Exception):  # a point outside today's space
                    self.add_evaluated_point(
                        params,
                        value if value is not None else 0.0,
                        error=state == "failed",
                        pruned=state == "pruned",
                    )
            finished.clear()
            return ok

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return _Told(
        points_to_evaluate=points or None,
        sampler=optuna.samplers.TPESampler(seed=spec.seed, n_startup_trials=startup),
    )
