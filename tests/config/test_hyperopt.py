"""The ``hyperopt:`` section: defaults as Ludwig fills them, located mistakes, substitution."""

import warnings

import pytest

from ludwig_nb.config import ConfigError, ConfigWarning, load_config
from ludwig_nb.config.hyperopt import apply_parameters, hyperopt_defaults, load_search_config

HEAD = """\
input_features:
  - {name: x, type: number}
  - {name: t, type: text}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 3}
hyperopt:
"""


def _load(body: str):
    """The config as a search loads it (load_config alone accepts what Ludwig accepts)."""
    return load_search_config(HEAD + body)


def _error(body: str) -> ConfigError:
    # load_config warns about keys Ludwig ignores (num_sample, goals) before the search refuses
    # them: the refusal is what these tests check
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        with pytest.raises(ConfigError) as info:
            _load(body)
    return info.value


def test_defaults_are_ludwigs_with_a_local_executor():
    cfg = _load(
        "  parameters:\n    trainer.learning_rate: {space: uniform, lower: 0.001, upper: 0.1}\n"
    )
    section = cfg["hyperopt"]
    assert (section["goal"], section["metric"], section["output_feature"], section["split"]) == (
        "minimize",
        "loss",
        "combined",
        "validation",
    )
    assert section["executor"]["type"] == "local"
    assert section["executor"]["scheduler"] == {"type": "fifo"}
    assert section["search_alg"] == {"type": "random"}


def test_defaults_do_not_change_the_input():
    raw = {"parameters": {}, "executor": {"num_samples": 3}}
    filled = hyperopt_defaults(raw)
    assert raw == {"parameters": {}, "executor": {"num_samples": 3}}
    assert filled["executor"]["num_samples"] == 3 and filled["executor"]["type"] == "local"


@pytest.mark.parametrize(
    ("body", "line", "path", "words"),
    [
        (
            "  parameters:\n    trainer.learning_rat: {space: uniform, lower: 0.1, upper: 1}\n",
            9,
            "hyperopt.parameters.trainer.learning_rat",
            "did you mean 'learning_rate'",
        ),
        (
            "  parameters:\n    trainr.learning_rate: {space: uniform, lower: 0.1, upper: 1}\n",
            9,
            "hyperopt.parameters.trainr.learning_rate",
            "did you mean 'trainer'",
        ),
        (
            "  parameters:\n    x.preprocessing.normalisation: {space: choice, categories: [a]}\n",
            9,
            "hyperopt.parameters.x.preprocessing.normalisation",
            "normalization",
        ),
        (
            "  parameters:\n    trainer.learning_rate: {space: unifrm, lower: 0.1, upper: 1}\n",
            9,
            "hyperopt.parameters.trainer.learning_rate.space",
            "did you mean 'uniform'",
        ),
        (
            "  parameters:\n    trainer.learning_rate: {space: loguniform, lower: 0, upper: 1}\n",
            9,
            "hyperopt.parameters.trainer.learning_rate.lower",
            "lower > 0",
        ),
        (
            "  parameters:\n    trainer.learning_rate: {space: uniform, lower: 1, upper: 0.5}\n",
            9,
            "hyperopt.parameters.trainer.learning_rate.upper",
            "must be above lower",
        ),
        (
            "  parameters:\n    trainer.batch_size: {space: randint, lower: 8}\n",
            9,
            "hyperopt.parameters.trainer.batch_size",
            "needs upper",
        ),
        (
            "  parameters:\n    trainer.batch_size: {space: qrandint, lower: 8, upper: 64, q: 2.5}"
            "\n",
            9,
            "hyperopt.parameters.trainer.batch_size.q",
            "whole numbers",
        ),
        (
            "  parameters:\n    trainer.batch_size: {space: choice, categories: []}\n",
            9,
            "hyperopt.parameters.trainer.batch_size.categories",
            "non-empty",
        ),
        (
            "  parameters:\n    trainer.learning_rate: {space: randn, mean: 0, sd: 1}\n",
            9,
            "hyperopt.parameters.trainer.learning_rate.space",
            "normal distribution",
        ),
    ],
)
def test_parameter_mistakes_are_located(body, line, path, words):
    err = _error(body)
    assert (err.line, err.path) == (line, path)
    assert words in str(err)


GOOD = "  parameters:\n    trainer.learning_rate: {space: uniform, lower: 0.001, upper: 0.1}\n"


@pytest.mark.parametrize(
    ("extra", "path", "words"),
    [
        ("  metric: roc_auc\n", "hyperopt.metric", "not reported for output feature 'combined'"),
        ("  output_feature: z\n", "hyperopt.output_feature", "not an output feature"),
        ("  metric: r2\n  output_feature: y\n", "hyperopt.metric", "roc_auc"),
        ("  goal: minimise\n", "hyperopt.goal", "did you mean 'minimize'"),
        ("  split: valid\n", "hyperopt.split", "validation"),
        ("  search_alg: {type: hebo}\n", "hyperopt.search_alg.type", "not available"),
        ("  search_alg: {type: optna}\n", "hyperopt.search_alg.type", "optuna"),
        (
            "  search_alg: {type: hebo}\n  executor: {type: ray}\n",
            "hyperopt.search_alg.type",
            "not run by ludwig_nb's ray executor",
        ),
        (
            "  executor: {type: ray, scheduler: {type: pbt}}\n",
            "hyperopt.executor.scheduler.type",
            "not available in the ray executor",
        ),
        (
            "  executor: {gpu_resources_per_trial: 2}\n",
            "hyperopt.executor.gpu_resources_per_trial",
            "one device",
        ),
        ("  executor: {num_samples: 0}\n", "hyperopt.executor.num_samples", ">= 1"),
        (
            "  executor: {storage_path: /mnt/shared}\n",
            "hyperopt.executor.storage_path",
            "use executor type ray",
        ),
        ("  executor: {time_budget_s: -5}\n", "hyperopt.executor.time_budget_s", "must be >= 1"),
        (
            "  executor: {scheduler: {type: pbt}}\n",
            "hyperopt.executor.scheduler.type",
            "not available",
        ),
        ("  executor: {scheduler: {type: ahsa}}\n", "hyperopt.executor.scheduler.type", "'asha'"),
        ("  executor: {num_sample: 4}\n", "hyperopt.executor.num_sample", "num_samples"),
        ("  goals: minimize\n", "hyperopt.goals", "did you mean 'goal'"),
    ],
)
def test_section_mistakes_are_located(extra, path, words):
    err = _error(GOOD + extra)
    assert err.path == path and err.line == 10
    assert words in str(err)


def test_the_ray_executor_is_accepted_with_tunes_random_search_over_a_normal():
    body = "  parameters:\n    trainer.learning_rate: {space: randn, mean: 0.1, sd: 0.01}\n"
    cfg = _load(body + "  executor: {type: ray, gpu_resources_per_trial: 0.5}\n")
    assert cfg["hyperopt"]["executor"]["type"] == "ray"
    assert cfg["hyperopt"]["executor"]["gpu_resources_per_trial"] == 0.5


def test_search_alg_keys_the_search_reads_are_not_called_ignored():
    parameters = (
        "  parameters:\n    trainer.learning_rate: {space: uniform, lower: 0.01, upper: 0.1}\n"
    )
    read = "  search_alg:\n    type: random\n    random_state_seed: 3\n    points_to_evaluate:\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigWarning)  # any warning fails the test
        cfg = load_config(HEAD + parameters + read + "      - {trainer.learning_rate: 0.05}\n")
        load_config(HEAD + parameters + "  search_alg: {type: optuna, n_startup_trials: 2}\n")
    assert cfg.written_hyperopt["search_alg"]["random_state_seed"] == 3  # what the search reads
    with pytest.warns(ConfigWarning, match="'random_stat_seed' is not a Ludwig key"):
        load_config(HEAD + parameters + "  search_alg: {type: random, random_stat_seed: 3}\n")


def test_the_documented_default_executor_may_be_written():
    """``executor.type: local`` is the default the docs name: writing it is not refused."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigWarning)  # any warning fails the test
        written = load_config(HEAD + GOOD + "  executor: {type: local, num_samples: 2}\n")
        searched = _load(GOOD + "  executor: {type: local, num_samples: 2}\n")
    assert written.written_hyperopt["executor"]["type"] == "local"
    assert searched["hyperopt"]["executor"]["type"] == "local"
    with pytest.raises(ConfigError, match="unknown value 'lcoal'") as info:
        load_config(HEAD + GOOD + "  executor: {type: lcoal}\n")
    assert "did you mean 'local'?" in str(info.value) and "allowed: ray" not in str(info.value)


def test_feature_metrics_and_goal_accepted():
    cfg = _load(GOOD + "  output_feature: y\n  metric: roc_auc\n  goal: maximize\n")
    assert cfg["hyperopt"]["metric"] == "roc_auc"


def test_train_refuses_a_search_and_names_the_entry_points():
    from ludwig_nb.engines.registry import get_engine

    with pytest.raises(ConfigError) as info:
        get_engine("builtin").check(load_config(HEAD + GOOD))
    assert info.value.path == "hyperopt" and info.value.line == 7
    assert "%%ludwig_hyperopt" in str(info.value) and "ludwig_nb.hyperopt" in str(info.value)


def test_apply_parameters_as_ludwig_substitutes_them():
    config = {
        "input_features": [{"name": "x", "type": "number"}, {"name": "t", "type": "text"}],
        "output_features": [{"name": "y", "type": "binary"}],
        "trainer": {"epochs": 3, "learning_rate": 0.1},
        "hyperopt": {"parameters": {}},
    }
    out = apply_parameters(
        config,
        {
            "trainer.learning_rate": 0.01,
            "t.encoder.type": "rnn",
            "combiner.output_size": 32,
            ".": {"trainer": {"batch_size": 8}},
        },
    )
    assert "hyperopt" not in out
    assert out["trainer"] == {"epochs": 3, "learning_rate": 0.01, "batch_size": 8}
    assert out["input_features"][1]["encoder"] == {"type": "rnn"}
    assert out["combiner"] == {"output_size": 32}
    assert config["trainer"]["learning_rate"] == 0.1  # the input is not changed


def test_points_to_evaluate_name_searched_parameters():
    err = _error(
        GOOD
        + "  search_alg:\n    type: random\n    points_to_evaluate:\n      - {trainer.lr: 0.1}\n"
    )
    assert err.path == "hyperopt.search_alg.points_to_evaluate[0].trainer.lr"
    assert "trainer.learning_rate" in str(err)


def test_load_config_accepts_what_ludwig_accepts_and_the_search_refuses_what_it_cannot_run():
    ray = GOOD + "  executor: {type: ray, scheduler: {type: pbt}}\n"
    assert load_config(HEAD + ray).to_dict()["hyperopt"]["executor"]["type"] == "ray"
    with pytest.raises(ConfigError, match="pbt is not available in the ray executor"):
        load_search_config(HEAD + ray)


def test_trial_resources_may_be_fractions_though_ludwigs_schema_says_integers():
    shares = GOOD + "  executor: {cpu_resources_per_trial: 0.5, gpu_resources_per_trial: 0.25}\n"
    executor = load_config(HEAD + shares).to_dict()["hyperopt"]["executor"]
    assert (executor["cpu_resources_per_trial"], executor["gpu_resources_per_trial"]) == (0.5, 0.25)
    with pytest.raises(ConfigError, match="gpu_resources_per_trial"):
        load_config(HEAD + GOOD + "  executor: {gpu_resources_per_trial: -1}\n")


def test_the_ray_executor_takes_a_storage_path_and_a_config_without_one_renders_as_ludwigs():
    stored = GOOD + "  executor: {type: ray, storage_path: /mnt/shared}\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigWarning)  # not called a key Ludwig ignores
        assert _load(stored)["hyperopt"]["executor"]["storage_path"] == "/mnt/shared"
    plain = load_config(HEAD + GOOD + "  executor: {type: ray}\n").to_dict()
    assert "storage_path" not in plain["hyperopt"]["executor"]
    with pytest.raises(ConfigError, match="must be a string"):
        load_config(HEAD + GOOD + "  executor: {type: ray, storage_path: 3}\n")


@pytest.mark.parametrize(
    ("space", "path", "words"),
    [
        ("trainer.batch_size: {space: grid_search, values: [8, 0]}", "values[1]", ">= 1, got 0"),
        ("trainer.learning_rate: {space: choice, categories: [0.1, .nan]}", "[1]", "not NaN"),
        ("trainer.learning_rate: {space: uniform, lower: 0.1, upper: 2}", "upper", "<= 1, got 2"),
        ("trainer.epochs: {space: qrandint, lower: 0, upper: 8, q: 2}", "lower", ">= 1, got 0"),
        (
            "trainer.optimizer: {space: choice, categories: [{type: adam}, {type: sdg}]}",
            "[1]",
            "sdg",
        ),
        ("x.preprocessing.normalization: {space: choice, categories: [zscore, z]}", "[1]", "'z'"),
    ],
)
def test_every_value_a_trial_may_get_is_checked_at_its_line(space, path, words):
    err = _error(f"  parameters:\n    {space}\n")
    assert err.line == 9 and err.path.endswith(path) and words in str(err)


def test_values_the_schema_accepts_pass_with_their_neighbours():
    cfg = _load(
        "  parameters:\n"
        "    trainer.batch_size: {space: qrandint, lower: 8, upper: 64, q: 8}\n"
        "    trainer.learning_rate: {space: loguniform, lower: 0.0001, upper: 1}\n"
        "    t.encoder.type: {space: choice, categories: [parallel_cnn, rnn, embed]}\n"
        "    t.encoder.dropout: {space: uniform, lower: 0.0, upper: 0.5}\n"
        "    x.preprocessing.fill_value: {space: grid_search, values: [0.0, -1.5]}\n"
        "    .: {space: choice, categories: [{trainer: {epochs: 2}}, {combiner: {type: concat}}]}\n"
    )
    assert len(cfg["hyperopt"]["parameters"]) == 6
