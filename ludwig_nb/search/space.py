"""Ludwig's hyperopt spaces, search algorithms and schedulers as Optuna objects.

``choice`` / ``grid_search`` over values Optuna cannot store (mappings, lists) are searched
over their indices and decoded back; q-spaces on a log scale are sampled on the log scale
and rounded to a multiple of ``q``, as Ray Tune does.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import optuna

__all__ = ["SearchSpace", "grid_points", "make_pruner", "make_sampler"]

_PRIMITIVE = (type(None), bool, int, float, str)


class SearchSpace:
    """The Optuna distributions of a rendered ``hyperopt`` section, and their decoding.

    Args:
        parameters: The ``hyperopt.parameters`` section: ``{dotted path: {space: ..., ...}}``.
    """

    def __init__(self, parameters: dict[str, dict[str, Any]]) -> None:
        self.parameters = parameters
        self.distributions: dict[str, optuna.distributions.BaseDistribution] = {
            name: _distribution(spec) for name, spec in parameters.items()
        }

    @property
    def all_grid(self) -> bool:
        """Whether every parameter is a ``grid_search``."""
        return all(spec["space"] == "grid_search" for spec in self.parameters.values())

    def grid(self) -> dict[str, list[Any]]:
        """GridSampler's search space (grid_search and choice parameters only)."""
        out = {}
        for name, spec in self.parameters.items():
            values = spec.get("values", spec.get("categories"))
            if values is None:
                raise ValueError(f"{name}: a grid search needs grid_search or choice spaces")
            out[name] = list(_encoded_choices(values))
        return out

    @property
    def grid_size(self) -> int:
        """The number of points of the grid (the product of the grid parameters' sizes)."""
        return math.prod(len(v) for v in self.grid().values())

    def decode(self, internal: dict[str, Any]) -> dict[str, object]:
        """Optuna's values -> the values written into the config."""
        out = {}
        for name, value in internal.items():
            spec = self.parameters[name]
            space = spec["space"]
            if space in ("choice", "grid_search"):
                values = spec.get("values", spec.get("categories")) or []
                out[name] = values[int(value)] if _indexed(values) else value
            elif space in ("qloguniform", "qlograndint"):
                q = spec["q"]
                rounded = round(float(value) / q) * q
                out[name] = int(rounded) if space == "qlograndint" else rounded
            else:
                out[name] = value
        return out

    def encode(self, values: dict[str, object]) -> dict[str, object]:
        """Config values -> Optuna's (for trials restored from the journal)."""
        out = {}
        for name, value in values.items():
            spec = self.parameters.get(name)
            if spec is None:
                continue
            if spec["space"] in ("choice", "grid_search"):
                choices = spec.get("values", spec.get("categories")) or []
                out[name] = choices.index(value) if _indexed(choices) else value
            else:
                out[name] = value
        return out

    def sample(self, rng: random.Random) -> dict[str, object]:
        """One point drawn at random from the space, as config values.

        What a queued trial may get: the search ETA costs queued trials over such draws.

        Args:
            rng: the random source (seed it for repeatable draws).

        Returns:
            ``{parameter: value}`` for every parameter.
        """
        from optuna.distributions import CategoricalDistribution, FloatDistribution

        internal: dict[str, object] = {}
        for name, dist in self.distributions.items():
            if isinstance(dist, CategoricalDistribution):
                internal[name] = rng.choice(list(dist.choices))
                continue
            low, high = float(dist.low), float(dist.high)  # type: ignore[attr-defined]
            if dist.log:  # type: ignore[attr-defined]
                value = math.exp(rng.uniform(math.log(low), math.log(high)))
            else:
                value = rng.uniform(low, high)
            step = dist.step  # type: ignore[attr-defined]
            if step:
                value = low + round((value - low) / step) * step
            internal[name] = value if isinstance(dist, FloatDistribution) else round(value)
        return self.decode(internal)


def _indexed(values: list[object]) -> bool:
    return not all(isinstance(v, _PRIMITIVE) for v in values)


def _encoded_choices(values: list[object]) -> list[Any]:
    return list(range(len(values))) if _indexed(values) else list(values)


def _distribution(spec: dict[str, Any]) -> optuna.distributions.BaseDistribution:
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    space = spec["space"]
    if space in ("choice", "grid_search"):
        return CategoricalDistribution(
            _encoded_choices(list(spec.get("values", spec.get("categories")) or []))
        )
    lower, upper = spec["lower"], spec["upper"]
    if space == "uniform":
        return FloatDistribution(lower, upper)
    if space == "quniform":
        q = spec["q"]
        top = lower + math.floor((upper - lower) / q + 1e-9) * q
        return FloatDistribution(lower, top, step=q)
    if space in ("loguniform", "qloguniform"):
        return FloatDistribution(lower, upper, log=True)
    if space == "randint":  # Ray Tune: upper is exclusive
        return IntDistribution(int(lower), int(upper) - 1)
    if space == "qrandint":  # Ray Tune: upper is inclusive
        q = int(spec["q"])
        top = int(lower) + (int(upper) - int(lower)) // q * q
        return IntDistribution(int(lower), top, step=q)
    if space in ("lograndint", "qlograndint"):
        return IntDistribution(int(lower), int(upper) - (space == "lograndint"), log=True)
    raise ValueError(f"space {space} is not sampled by the local executor")


def make_sampler(
    search_alg: dict[str, Any], space: SearchSpace, seed: int | None
) -> optuna.samplers.BaseSampler:
    """Ludwig ``search_alg.type`` -> an Optuna sampler (random, TPE, grid)."""
    kind = search_alg.get("type", "random")
    if kind in ("random", "variant_generator") and space.all_grid:
        return optuna.samplers.GridSampler(space.grid(), seed=seed)
    if kind in ("optuna", "hyperopt", "bohb"):
        startup = int(search_alg.get("n_startup_trials", 3))
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup)
    return optuna.samplers.RandomSampler(seed=seed)


def make_pruner(scheduler: dict[str, Any], max_epochs: int) -> optuna.pruners.BasePruner:
    """Ludwig ``executor.scheduler`` -> an Optuna pruner. Steps are evaluations (1, 2, ...).

    ``asha``/``async_hyperband`` -> successive halving (``grace_period`` -> min resource,
    ``reduction_factor``, default 4 as in Ray); ``hyperband`` -> Hyperband (``max_t``, default
    the trainer's epochs); ``median_stopping_rule`` -> median (``grace_period`` evaluations
    before a trial may stop, default 1; ``min_samples_required`` trials, default 3).
    """
    kind = scheduler.get("type", "fifo")
    grace = int(scheduler.get("grace_period") or 1)
    if kind in ("asha", "async_hyperband"):
        return optuna.pruners.SuccessiveHalvingPruner(
            min_resource=grace, reduction_factor=int(scheduler.get("reduction_factor") or 4)
        )
    if kind in ("hyperband", "hb_bohb"):
        return optuna.pruners.HyperbandPruner(
            min_resource=grace,
            max_resource=int(scheduler.get("max_t") or max(max_epochs, grace + 1)),
            reduction_factor=int(scheduler.get("reduction_factor") or 3),
        )
    if kind in ("median_stopping_rule", "median"):
        return optuna.pruners.MedianPruner(
            n_startup_trials=int(scheduler.get("min_samples_required") or 3),
            n_warmup_steps=grace,
        )
    return optuna.pruners.NopPruner()


def grid_points(space: SearchSpace) -> list[dict[str, object]]:
    """Every point of a pure grid, in order (the Tune executor's grid still to run)."""
    grid = space.grid()
    return [dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())]
