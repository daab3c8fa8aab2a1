"""The ECD ``trainer`` section: training loop, optimizer, scheduler (Ludwig 0.11, see
../shared/design/notes/LUDWIG_FACTS.md §5)."""

from __future__ import annotations

from ludwig_nb.config.schema.fields import ListOf, Param, Section, Spec
from ludwig_nb.config.schema.variants import Variants

__all__ = ["OPTIMIZERS", "SCHEDULER_DECAYS", "trainer_section"]

SCHEDULER_DECAYS = ("linear", "exponential", "cosine")
_SPLITS = ("training", "validation", "test")


def _betas() -> ListOf:
    return ListOf(Param(0.9, "float", ge=0.0, lt=1.0), [0.9, 0.999], nullable=False, length=2)


def _eps(default: float) -> Param:
    return Param(default, "float", ge=0.0)


def _decay() -> Param:
    return Param(0.0, "float", ge=0.0)


_ADAM = Section(
    {
        "betas": _betas(),
        "eps": _eps(1e-08),
        "weight_decay": _decay(),
        "amsgrad": Param(False, "bool"),
    }
)

#: optimizer type -> its parameters (``lr`` comes from ``trainer.learning_rate``)
OPTIMIZERS: dict[str, Spec] = {
    "sgd": Section(
        {
            "momentum": Param(0.0, "float", ge=0.0),
            "weight_decay": _decay(),
            "dampening": Param(0.0, "float", ge=0.0),
            "nesterov": Param(False, "bool"),
        }
    ),
    "lbfgs": Section(
        {
            "max_iter": Param(20, "int", ge=1),
            "max_eval": Param(None, "int", "null", ge=1),
            "tolerance_grad": Param(1e-07, "float", ge=0.0),
            "tolerance_change": Param(1e-09, "float", ge=0.0),
            "history_size": Param(100, "int", ge=1),
            "line_search_fn": Param(None, "null", choices=("strong_wolfe",)),
        }
    ),
    "adam": _ADAM,
    "adamw": _ADAM,
    "adadelta": Section(
        {"rho": Param(0.9, "float", ge=0.0, le=1.0), "eps": _eps(1e-06), "weight_decay": _decay()}
    ),
    "adagrad": Section(
        {
            "initial_accumulator_value": Param(0, "float", ge=0.0),
            "lr_decay": Param(0, "float", ge=0.0),
            "weight_decay": _decay(),
            "eps": _eps(1e-10),
        }
    ),
    "adamax": Section({"betas": _betas(), "eps": _eps(1e-08), "weight_decay": _decay()}),
    "nadam": Section(
        {
            "betas": _betas(),
            "eps": _eps(1e-08),
            "weight_decay": _decay(),
            "momentum_decay": Param(0.004, "float", ge=0.0),
        }
    ),
    "rmsprop": Section(
        {
            "momentum": Param(0.0, "float", ge=0.0),
            "alpha": Param(0.99, "float", ge=0.0, le=1.0),
            "eps": _eps(1e-08),
            "centered": Param(False, "bool"),
            "weight_decay": _decay(),
        }
    ),
}

_SCHEDULER = Section(
    {
        "decay": Param(None, "null", choices=SCHEDULER_DECAYS),
        "decay_rate": Param(0.96, "float", ge=0.0, le=1.0),
        "decay_steps": Param(10000, "int", ge=1),
        "staircase": Param(False, "bool"),
        "reduce_on_plateau": Param(0, "int", ge=0),
        "reduce_on_plateau_patience": Param(10, "int", ge=0),
        "reduce_on_plateau_rate": Param(0.1, "float", ge=0.0, le=1.0),
        "warmup_evaluations": Param(0, "float", ge=0.0),
        "warmup_fraction": Param(0.0, "float", ge=0.0, le=1.0),
        "reduce_eval_metric": Param("loss", "str"),
        "reduce_eval_split": Param("training", choices=_SPLITS),
        "t_0": Param(None, "int", "null", ge=1),
        "t_mult": Param(1, "int", ge=1),
        "eta_min": Param(0, "float", ge=0.0),
    }
)

_CLIPPING = Section(
    {
        "clipglobalnorm": Param(0.5, "float", "null", ge=0.0),
        "clipnorm": Param(None, "float", "null", ge=0.0),
        "clipvalue": Param(None, "float", "null", ge=0.0),
    }
)

_PROFILER = Section(
    {
        "wait": Param(1, "int", ge=0),
        "warmup": Param(1, "int", ge=0),
        "active": Param(3, "int", ge=0),
        "repeat": Param(5, "int", ge=0),
        "skip_first": Param(0, "int", ge=0),
    }
)


def _positive_or_auto(default: int | str) -> Param:
    return Param(default, "int", literals=("auto",), ge=1)


def trainer_section() -> Section:
    """The ECD trainer, every key with its default."""
    return Section(
        {
            "epochs": Param(100, "int", ge=1),
            "train_steps": Param(None, "int", "null", ge=1),
            "early_stop": Param(5, "int", ge=-1),
            "batch_size": _positive_or_auto("auto"),
            "eval_batch_size": Param(None, "int", "null", literals=("auto",), ge=0),
            "effective_batch_size": _positive_or_auto("auto"),
            "gradient_accumulation_steps": _positive_or_auto("auto"),
            "max_batch_size": Param(1099511627776, "int", ge=1),
            "learning_rate": Param(0.001, "float", literals=("auto",), ge=0.0, le=1.0),
            "learning_rate_scaling": Param("linear", choices=("constant", "sqrt", "linear")),
            "learning_rate_scheduler": _SCHEDULER,
            "optimizer": Variants(OPTIMIZERS, "adam", what="optimizer"),
            "regularization_type": Param("l2", "null", choices=("l1", "l2", "l1_l2")),
            "regularization_lambda": Param(0.0, "float", ge=0.0, le=1.0),
            "gradient_clipping": _CLIPPING,
            "validation_field": Param(None, "str", "null"),
            "validation_metric": Param(None, "str", "null"),
            "steps_per_checkpoint": Param(0, "int", ge=0),
            "checkpoints_per_epoch": Param(0, "int", ge=0),
            "eval_steps": Param(None, "int", "null", ge=1),
            "evaluate_training_set": Param(False, "bool"),
            "skip_all_evaluation": Param(False, "bool"),
            "should_shuffle": Param(True, "bool"),
            "increase_batch_size_on_plateau": Param(0, "int", ge=0),
            "increase_batch_size_on_plateau_patience": Param(5, "int", ge=0),
            "increase_batch_size_on_plateau_rate": Param(2.0, "float", ge=0.0),
            "increase_batch_size_eval_metric": Param("loss", "str"),
            "increase_batch_size_eval_split": Param("training", choices=_SPLITS),
            "use_mixed_precision": Param(False, "bool"),
            "compile": Param(False, "bool"),
            "enable_gradient_checkpointing": Param(False, "bool"),
            "layers_to_freeze_regex": Param(None, "str", "null"),
            "bucketing_field": Param(None, "str", "null"),
            "enable_profiling": Param(False, "bool"),
            "profiler": _PROFILER,
        }
    )
