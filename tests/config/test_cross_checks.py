"""Checks across sections: names, references, checkpoints, validation, split, batch sizes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ludwig_nb.config import ConfigError, load_config

BASE = """\
input_features:
  - name: x
    type: number
  - name: t
    type: text
output_features:
  - name: y
    type: binary
  - name: z
    type: number
"""


def _where(err: ConfigError) -> list[tuple[int | None, str]]:
    return [(e.line, e.path) for e in err.errors]


def test_feature_names_are_unique(fail: Callable[..., ConfigError]) -> None:
    err = fail(BASE + "  - name: x\n    type: category\n")
    assert _where(err) == [(11, "output_features[2].name")]
    assert "already used by input_features[0]" in err.message


def test_checkpoint_settings_exclude_each_other(fail: Callable[..., ConfigError]) -> None:
    err = fail(BASE + "trainer:\n  steps_per_checkpoint: 5\n  checkpoints_per_epoch: 2\n")
    assert _where(err) == [(13, "trainer.checkpoints_per_epoch")]


@pytest.mark.parametrize(
    ("trainer", "line", "path", "words"),
    [
        ("  validation_field: w\n", 12, "trainer.validation_field", "no output feature"),
        (
            "  validation_field: y\n  validation_metric: r2\n",
            13,
            "trainer.validation_metric",
            "not a metric of validation field 'y'",
        ),
        (
            "  validation_metric: jaccard\n",
            12,
            "trainer.validation_metric",
            "not a metric of any output feature",
        ),
        (
            "  validation_field: combined\n  validation_metric: accuracy\n",
            13,
            "trainer.validation_metric",
            "not a metric",
        ),
    ],
)
def test_validation_field_and_metric_fit_an_output(
    fail: Callable[..., ConfigError], trainer: str, line: int, path: str, words: str
) -> None:
    err = fail(BASE + "trainer:\n" + trainer)
    assert _where(err) == [(line, path)]
    assert words in err.message


@pytest.mark.parametrize(
    ("trainer", "field", "metric"),
    [
        ("", "y", "roc_auc"),
        ("  validation_metric: r2\n", "z", "r2"),
        ("  validation_field: z\n", "z", "mean_squared_error"),
        ("  validation_field: combined\n", "combined", "loss"),
    ],
)
def test_validation_defaults_are_filled_like_ludwig(trainer: str, field: str, metric: str) -> None:
    cfg = load_config(BASE + "trainer:\n" + trainer + "  epochs: 1\n")
    assert (cfg.trainer["validation_field"], cfg.trainer["validation_metric"]) == (field, metric)


@pytest.mark.parametrize("ftype", ["date", "bag", "h3", "audio"])
def test_input_only_types_are_not_outputs(fail: Callable[..., ConfigError], ftype: str) -> None:
    err = fail(BASE + f"  - name: w\n    type: {ftype}\n")
    assert _where(err) == [(12, "output_features[2].type")]
    assert "can only be inputs" in err.message


def test_split_probabilities_sum_to_one(fail: Callable[..., ConfigError]) -> None:
    err = fail(BASE + "preprocessing:\n  split:\n    probabilities: [0.8, 0.1, 0.2]\n")
    assert _where(err) == [(13, "preprocessing.split.probabilities")]
    assert "sum to 1.1" in err.message


def test_split_probabilities_are_three(fail: Callable[..., ConfigError]) -> None:
    err = fail(BASE + "preprocessing:\n  split:\n    probabilities: [0.8, 0.2]\n")
    assert _where(err) == [(13, "preprocessing.split.probabilities")]


def test_stratify_needs_a_column(fail: Callable[..., ConfigError]) -> None:
    err = fail(BASE + "preprocessing:\n  split:\n    type: stratify\n")
    assert _where(err) == [(12, "preprocessing.split")]


def test_sample_ratio_and_size_exclude_each_other(fail: Callable[..., ConfigError]) -> None:
    err = fail(BASE + "preprocessing:\n  sample_ratio: 0.5\n  sample_size: 10\n")
    assert _where(err) == [(13, "preprocessing.sample_size")]


@pytest.mark.parametrize(
    ("trainer", "words"),
    [
        ("  batch_size: 64\n  effective_batch_size: 32\n", "smaller than batch_size"),
        ("  batch_size: 64\n  effective_batch_size: 96\n", "not a multiple"),
        (
            "  batch_size: 64\n  effective_batch_size: 256\n  gradient_accumulation_steps: 2\n",
            "64 x 2",
        ),
    ],
)
def test_effective_batch_size_fits_batch_size(
    fail: Callable[..., ConfigError], trainer: str, words: str
) -> None:
    err = fail(BASE + "trainer:\n" + trainer)
    assert _where(err) == [(13, "trainer.effective_batch_size")]
    assert words in err.message


def test_consistent_batch_sizes_pass() -> None:
    cfg = load_config(
        BASE + "trainer:\n  batch_size: 64\n  effective_batch_size: 128\n"
        "  gradient_accumulation_steps: 2\n"
    )
    assert cfg.trainer["effective_batch_size"] == 128


def test_tied_must_name_another_input_of_the_same_type(fail: Callable[..., ConfigError]) -> None:
    text = BASE.replace("    type: text\n", "    type: text\n    tied: x\n", 1)
    err = fail(text)
    assert _where(err) == [(6, "input_features[1].tied")]
    assert "it is a number feature" in err.message
    err = fail(BASE.replace("    type: text\n", "    type: text\n    tied: tt\n", 1))
    assert err.hint == "did you mean 't'?"


def test_dependencies_name_other_outputs(fail: Callable[..., ConfigError]) -> None:
    text = BASE + "    dependencies: [y, q]\n"
    err = fail(text)
    assert _where(err) == [(11, "output_features[1].dependencies[1]")]
    assert load_config(BASE + "    dependencies: [y]\n").output_features[1]["dependencies"] == ["y"]


def test_cross_checks_run_beside_schema_errors(fail: Callable[..., ConfigError]) -> None:
    err = fail(BASE + "  - name: x\n    type: category\ntrainer:\n  epochs: 0\n")
    assert _where(err) == [(11, "output_features[2].name"), (14, "trainer.epochs")]
