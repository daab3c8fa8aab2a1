"""Ludwig spaces as Optuna distributions; decoding back to config values; samplers, pruners."""

import optuna
import pytest

from ludwig_nb.search.space import SearchSpace, make_pruner, make_sampler


def _space(**params):
    return SearchSpace(params)


def test_ray_tune_bounds_are_kept():
    space = _space(
        a={"space": "randint", "lower": 1, "upper": 5},
        b={"space": "qrandint", "lower": 8, "upper": 64, "q": 8},
        c={"space": "quniform", "lower": 0.0, "upper": 1.0, "q": 0.25},
        d={"space": "loguniform", "lower": 1e-4, "upper": 1e-1},
    )
    dist = space.distributions
    assert (dist["a"].low, dist["a"].high) == (1, 4)  # randint: upper exclusive
    assert (dist["b"].low, dist["b"].high, dist["b"].step) == (8, 64, 8)  # qrandint: inclusive
    assert dist["c"].step == 0.25 and dist["d"].log


def test_choices_of_mappings_are_searched_by_index_and_decoded():
    blocks = [{"type": "concat"}, {"type": "transformer", "num_layers": 2}]
    space = _space(**{".": {"space": "choice", "categories": [{"combiner": b} for b in blocks]}})
    assert space.distributions["."].choices == (0, 1)
    assert space.decode({".": 1}) == {".": {"combiner": blocks[1]}}
    assert space.encode({".": {"combiner": blocks[1]}}) == {".": 1}
    plain = _space(x={"space": "choice", "categories": [16, 32]})
    assert plain.distributions["x"].choices == (16, 32) and plain.decode({"x": 32}) == {"x": 32}


def test_q_log_spaces_round_to_q():
    space = _space(x={"space": "qloguniform", "lower": 1, "upper": 1000, "q": 5})
    assert space.decode({"x": 123.4}) == {"x": 125}


def test_every_sampled_value_lies_in_its_space():
    space = _space(
        lr={"space": "loguniform", "lower": 1e-4, "upper": 1e-1},
        bs={"space": "qrandint", "lower": 8, "upper": 64, "q": 8},
        n={"space": "randint", "lower": 1, "upper": 4},
    )
    study = optuna.create_study(sampler=make_sampler({"type": "random"}, space, seed=0))
    for _ in range(30):
        values = space.decode(study.ask(space.distributions).params)
        assert 1e-4 <= values["lr"] <= 1e-1 and values["bs"] % 8 == 0 and values["n"] in (1, 2, 3)


def test_samplers_and_pruners_map_ludwigs_names():
    space = _space(x={"space": "grid_search", "values": [1, 2, 3]})
    assert isinstance(make_sampler({"type": "random"}, space, 0), optuna.samplers.GridSampler)
    assert space.grid_size == 3
    other = _space(x={"space": "uniform", "lower": 0, "upper": 1})
    assert isinstance(make_sampler({"type": "optuna"}, other, 0), optuna.samplers.TPESampler)
    assert isinstance(make_sampler({"type": "random"}, other, 0), optuna.samplers.RandomSampler)
    assert isinstance(
        make_pruner({"type": "async_hyperband"}, 10), optuna.pruners.SuccessiveHalvingPruner
    )
    assert isinstance(make_pruner({"type": "hyperband"}, 10), optuna.pruners.HyperbandPruner)
    assert isinstance(
        make_pruner({"type": "median_stopping_rule"}, 10), optuna.pruners.MedianPruner
    )
    assert isinstance(make_pruner({"type": "fifo"}, 10), optuna.pruners.NopPruner)


def test_a_grid_needs_grid_spaces():
    with pytest.raises(ValueError, match="grid"):
        _space(x={"space": "uniform", "lower": 0, "upper": 1}).grid()
