"""The ``hyperopt:`` section: Ludwig 0.11's shape, checked for meaning and located.

The schema layer accepts the section's shape; this module checks what it means against the
rest of the config: every parameter path names something the config has, every space has
the arguments its type needs, the metric exists for the output feature, and the search
algorithm, scheduler and executor are ones the local executor runs. Defaults are filled in
the way Ludwig's ``update_hyperopt_params_with_defaults`` fills them.

``apply_parameters`` substitutes sampled values into a config as Ludwig's
``substitute_parameters`` does (``<feature name>.<key>`` for features, ``.`` for the whole
config, ``defaults.<type>.<section>.<key>``).
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Any

from ludwig_nb.config.errors import ConfigError
from ludwig_nb.config.schema.fields import Ctx, suggest
from ludwig_nb.config.yaml_positions import KeyPath

if TYPE_CHECKING:
    from ludwig_nb.config.model import Config

__all__ = [
    "EXECUTORS",
    "GOALS",
    "METRICS_BY_TYPE",
    "SCHEDULERS",
    "SEARCH_ALGS",
    "SPACES",
    "SPLITS",
    "apply_parameters",
    "check_hyperopt",
    "hyperopt_defaults",
    "load_search_config",
    "trial_base",
]

#: space type -> (required arguments, optional arguments with defaults)
SPACES: dict[str, tuple[tuple[str, ...], dict[str, object]]] = {
    "uniform": (("lower", "upper"), {}),
    "quniform": (("lower", "upper", "q"), {}),
    "loguniform": (("lower", "upper"), {"base": 10}),
    "qloguniform": (("lower", "upper", "q"), {"base": 10}),
    "randint": (("lower", "upper"), {}),
    "qrandint": (("lower", "upper", "q"), {}),
    "lograndint": (("lower", "upper"), {"base": 10}),
    "qlograndint": (("lower", "upper", "q"), {"base": 10}),
    "randn": ((), {"mean": 0.0, "sd": 1.0}),
    "qrandn": (("q",), {"mean": 0.0, "sd": 1.0}),
    "choice": (("categories",), {}),
    "grid_search": (("values",), {}),
}
#: spaces the local (Optuna) executor cannot sample: Optuna has no normal distribution
_UNSAMPLED_LOCALLY = ("randn", "qrandn")
GOALS = ("minimize", "maximize")
SPLITS = ("train", "training", "validation", "test")
#: Ludwig search_alg type -> what the local executor uses (None: not available locally)
SEARCH_ALGS: dict[str, str | None] = {
    "random": "random",
    "variant_generator": "random",
    "optuna": "tpe",
    "hyperopt": "tpe",
    "bohb": "tpe",
    "ax": None,
    "bayesopt": None,
    "blendsearch": None,
    "cfo": None,
    "dragonfly": None,
    "hebo": None,
    "nevergrad": None,
    "skopt": None,
    "zoopt": None,
}
#: Ludwig scheduler type -> Optuna pruner (None: not available locally)
SCHEDULERS: dict[str, str | None] = {
    "fifo": "none",
    "asha": "successive_halving",
    "async_hyperband": "successive_halving",
    "hyperband": "hyperband",
    "hb_bohb": "hyperband",
    "median_stopping_rule": "median",
    "median": "median",
    "pbt": None,
    "pbt_replay": None,
    "pb2": None,
    "resource_changing": None,
}
EXECUTORS = ("local", "ray", "optuna")
#: metrics an output feature of each type reports at every evaluation (``loss`` for all)
METRICS_BY_TYPE: dict[str, tuple[str, ...]] = {
    "binary": ("loss", "accuracy", "precision", "recall", "specificity", "f1", "roc_auc"),
    "number": (
        "loss",
        "mean_squared_error",
        "mean_absolute_error",
        "root_mean_squared_error",
        "r2",
    ),
    "category": ("loss", "accuracy", "hits_at_k"),
    "set": ("loss", "jaccard"),
    "vector": ("loss", "mean_squared_error", "mean_absolute_error", "r2"),
}
_MINIMIZED = {"loss", "mean_squared_error", "mean_absolute_error", "root_mean_squared_error"}
_EXECUTOR_KEYS = (
    "type",
    "num_samples",
    "time_budget_s",
    "max_concurrent_trials",
    "cpu_resources_per_trial",
    "gpu_resources_per_trial",
    "trial_driver_resources",
    "kubernetes_namespace",
    "scheduler",
    "storage_path",  # ours, as a Ray Train run's backend.storage_path: the ray executor
)
_TOP_KEYS = (
    "parameters",
    "goal",
    "metric",
    "output_feature",
    "split",
    "eval_split",
    "search_alg",
    "executor",
)


def hyperopt_defaults(section: dict[str, object]) -> dict[str, object]:
    """``section`` with Ludwig's defaults filled in (a new dict; ``section`` is unchanged).

    As Ludwig: ``num_samples: 1``, ``time_budget_s: 3600``, search ``random``, scheduler
    ``fifo``. The executor type defaults to ``local`` (ours; Ludwig's ``ray`` needs Ray Tune).
    """
    out = copy.deepcopy(section)
    out.setdefault("parameters", {})
    out.setdefault("goal", "minimize")
    out.setdefault("metric", "loss")
    out.setdefault("output_feature", "combined")
    out.setdefault("split", "validation")
    search = out.get("search_alg") or {}
    out["search_alg"] = {"type": "random", **search} if isinstance(search, dict) else search
    executor = out.get("executor") or {}
    if isinstance(executor, dict):
        executor = {
            "type": "local",
            "num_samples": 1,
            "time_budget_s": 3600,
            "max_concurrent_trials": "auto",
            "cpu_resources_per_trial": 1,
            "gpu_resources_per_trial": 0,
            **executor,
        }
        scheduler = executor.get("scheduler") or {"type": "fifo"}
        executor["scheduler"] = scheduler
    out["executor"] = executor
    return out


def load_search_config(source: Any) -> dict[str, object]:
    """``load_config`` plus what a search needs of its ``hyperopt`` section.

    Parameters that exist, spaces, goal and metric, search algorithm, an executor ludwig_nb can run.
    These are checks of what the search runs, not of the config's validity (Ludwig accepts, e.g., an
    empty search or ``executor: {type: ray}``), so ``load_config`` leaves them out. Returns the
    rendered config with our hyperopt defaults; raises ``ConfigError``.
    """
    from ludwig_nb.config.load import load_config

    config = load_config(source)
    rendered = config.to_dict()
    ctx = Ctx(config.positions)
    check_hyperopt(rendered, ctx, config.written_hyperopt)
    if ctx.problems:
        ordered = sorted(ctx.problems, key=lambda p: (p.line is None, p.line or 0, p.column or 0))
        raise ConfigError.collect(ordered)
    return rendered


def trial_base(config: Config) -> Config:
    """``config`` without its ``hyperopt`` section: what trains each trial, parameters aside.

    The positions of ``config``'s keys are kept, so that an engine's refusal of it is located
    in the search's config (an engine refuses a config with a ``hyperopt`` section: that is a
    search, not one run).
    """
    from ludwig_nb.config.model import Config

    rendered = config.to_dict()
    rendered.pop("hyperopt", None)
    return Config(rendered, source=config.source, positions=config.positions)


def check_hyperopt(cfg: dict[str, object], ctx: Ctx, written: object = None) -> None:
    """Check the ``hyperopt`` section against ``cfg``; problems go into ``ctx``.

    ``written``: the section as the user wrote it (default: ``cfg["hyperopt"]``); the
    schema layer's rendering fills Ludwig's Ray defaults (``executor.type: ray``), so the
    meaning is checked on what was written. Replaces ``cfg["hyperopt"]`` with that section
    with our defaults filled in (Ludwig's, but ``executor.type: local``).
    """
    raw = cfg.get("hyperopt") if written is None else written
    if raw is None:
        return
    base: KeyPath = ("hyperopt",)
    if not isinstance(raw, dict):
        ctx.problem(base, "hyperopt must be a mapping (parameters, goal, metric, executor, ...)")
        return
    for key in raw:
        if key not in _TOP_KEYS:
            ctx.problem(
                (*base, key), f"unknown hyperopt key {key!r}", hint=_hint(key, _TOP_KEYS), key=True
            )
    section = hyperopt_defaults(raw)
    cfg["hyperopt"] = section
    executor = section.get("executor")
    on_ray = isinstance(executor, dict) and executor.get("type") == "ray"
    search = section.get("search_alg")
    kind = search.get("type") if isinstance(search, dict) else None
    _check_parameters(cfg, section.get("parameters"), ctx, normal_ok=on_ray and kind != "optuna")
    _check_goal_metric(cfg, section, ctx)
    _check_search_alg(search, ctx, on_ray)
    _check_points(section, ctx)
    _check_executor(executor, ctx)


def _hint(word: str, options: Any) -> str:
    close = suggest(str(word), options)
    listed = ", ".join(options)
    return f"did you mean {close!r}? (one of: {listed})" if close else f"one of: {listed}"


# -- parameters --------------------------------------------------------------------------
def _check_parameters(
    cfg: dict[str, object], params: object, ctx: Ctx, normal_ok: bool = False
) -> None:
    base: KeyPath = ("hyperopt", "parameters")
    if not isinstance(params, dict) or not params:
        ctx.problem(
            base,
            "hyperopt.parameters must name at least one parameter to search",
            hint="e.g. parameters: {trainer.learning_rate: {space: loguniform, lower: 0.0001, "
            "upper: 0.1}}",
        )
        return
    for name, spec in params.items():
        path = (*base, name)
        _check_parameter_path(cfg, str(name), path, ctx)
        _check_space(spec, path, ctx, normal_ok)


def _check_parameter_path(cfg: dict[str, Any], name: str, path: KeyPath, ctx: Ctx) -> None:
    if name == ".":
        return
    parts = name.split(".")
    inputs = {f.get("name"): f for f in cfg.get("input_features", [])}
    outputs = {f.get("name"): f for f in cfg.get("output_features", [])}
    head = parts[0]
    if head in inputs or head in outputs:
        node: object = inputs.get(head) or outputs.get(head)
        where = "input feature" if head in inputs else "output feature"
    elif head == "defaults":
        return  # defaults.<type>.<section>.<key>: the schema layer owns what is valid there
    elif head in cfg and head not in ("input_features", "output_features", "hyperopt"):
        node, where = cfg[head], "section"
    else:
        features = [str(n) for n in [*inputs, *outputs]]
        sections = [k for k in cfg if k not in ("input_features", "output_features", "hyperopt")]
        ctx.problem(
            path,
            f"parameter {name!r}: {head!r} is neither a section of the config nor a feature name",
            hint=_hint(head, [*sections, *features]),
            key=True,
        )
        return
    for depth, part in enumerate(parts[1:], start=1):
        if not isinstance(node, dict):
            ctx.problem(
                path,
                f"parameter {name!r}: {'.'.join(parts[:depth])} is a value, not a section",
                key=True,
            )
            return
        if part not in node:
            if depth == len(parts) - 1 and node.get("type") is not None and depth > 1:
                # a key of a typed block (encoder, decoder, ...) that another type may have
                return
            ctx.problem(
                path,
                f"parameter {name!r}: the {where} {head!r} has no key "
                f"{'.'.join(parts[1 : depth + 1])!r}",
                hint=_hint(part, [str(k) for k in node]),
                key=True,
            )
            return
        node = node[part]


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_space(spec: object, path: KeyPath, ctx: Ctx, normal_ok: bool = False) -> None:
    if not isinstance(spec, dict):
        ctx.problem(
            path, "a parameter is a mapping with a space: {space: choice, categories: [...]}"
        )
        return
    space = spec.get("space")
    if space not in SPACES:
        ctx.problem(
            (*path, "space") if "space" in spec else path,
            f"unknown space {space!r}" if space is not None else "the parameter has no space",
            hint=_hint(str(space), list(SPACES)),
        )
        return
    if space in _UNSAMPLED_LOCALLY and not normal_ok:
        ctx.problem(
            (*path, "space"),
            f"space {space} (a normal distribution) is sampled only by the ray executor's "
            "random search (Optuna has no normal distribution)",
            hint="use uniform / quniform over the range you mean, or executor: {type: ray} "
            "with search_alg: {type: random}",
        )
        return
    required, optional = SPACES[space]
    allowed = ("space", *required, *optional)
    for key in spec:
        if key not in allowed:
            ctx.problem(
                (*path, key),
                f"space {space} takes no {key!r}",
                hint=f"its keys: {', '.join(allowed)}",
                key=True,
            )
    missing = [k for k in required if k not in spec]
    if missing:
        ctx.problem(path, f"space {space} needs {', '.join(missing)}")
        return
    if space in ("choice", "grid_search"):
        values = spec[required[0]]
        if not isinstance(values, list) or not values:
            ctx.problem((*path, required[0]), f"{required[0]} must be a non-empty list")
        return
    for key in (*required, *[k for k in optional if k in spec]):
        if not _number(spec[key]):
            ctx.problem((*path, key), f"{key} must be a number, not {spec[key]!r}")
            return
    if space in _UNSAMPLED_LOCALLY:
        if spec.get("sd", 1.0) <= 0:
            ctx.problem((*path, "sd"), f"sd must be positive, not {spec['sd']}")
        return
    if "int" in space:
        for key in ("lower", "upper", "q"):
            if key in spec and not float(spec[key]).is_integer():
                ctx.problem((*path, key), f"space {space} needs whole numbers, not {spec[key]}")
                return
    lower, upper = spec["lower"], spec["upper"]
    if not lower < upper:
        ctx.problem((*path, "upper"), f"upper ({upper}) must be above lower ({lower})")
    if "log" in space and lower <= 0:
        ctx.problem((*path, "lower"), f"space {space} needs lower > 0, not {lower}")
    if "q" in spec and spec["q"] <= 0:
        ctx.problem((*path, "q"), f"q must be positive, not {spec['q']}")


# -- goal, metric, split -------------------------------------------------------------------
def _check_goal_metric(cfg: dict[str, Any], section: dict[str, Any], ctx: Ctx) -> None:
    base: KeyPath = ("hyperopt",)
    if section["goal"] not in GOALS:
        ctx.problem(
            (*base, "goal"), f"unknown goal {section['goal']!r}", hint=_hint(section["goal"], GOALS)
        )
    if section["split"] not in SPLITS:
        ctx.problem(
            (*base, "split"),
            f"unknown split {section['split']!r}",
            hint=_hint(section["split"], SPLITS),
        )
    outputs = {f.get("name"): f for f in cfg.get("output_features", [])}
    feature = section["output_feature"]
    metric = section["metric"]
    if feature == "combined":
        metrics: tuple[str, ...] = ("loss",)
    elif feature in outputs:
        metrics = METRICS_BY_TYPE.get(str(outputs[feature].get("type")), ("loss",))
    else:
        ctx.problem(
            (*base, "output_feature"),
            f"output_feature {feature!r} is not an output feature of this config",
            hint=_hint(str(feature), ["combined", *[str(n) for n in outputs]]),
        )
        return
    if metric not in metrics:
        ctx.problem(
            (*base, "metric"),
            f"metric {metric!r} is not reported for output feature {feature!r}",
            hint=_hint(str(metric), metrics),
        )
        return
    goal = section["goal"]
    if (metric in _MINIMIZED and goal == "maximize") or (
        metric not in _MINIMIZED and goal == "minimize"
    ):
        # Ludwig accepts it; it is nearly always a mistake, so say so without refusing
        section.setdefault("_warnings", []).append(
            f"goal {goal} for metric {metric}: is that the direction you mean?"
        )


# -- search_alg, executor, scheduler -----------------------------------------------------------
#: what the ray executor's search algorithms are (Ray Tune's)
RAY_SEARCH_ALGS = ("random", "variant_generator", "optuna")
#: the schedulers the ray executor maps onto Ray Tune's
RAY_SCHEDULERS = (
    "fifo",
    "asha",
    "async_hyperband",
    "hyperband",
    "hb_bohb",
    "median_stopping_rule",
    "median",
)


def _check_search_alg(search: object, ctx: Ctx, on_ray: bool = False) -> None:
    path: KeyPath = ("hyperopt", "search_alg")
    if not isinstance(search, dict):
        ctx.problem(path, "search_alg must be a mapping: {type: random}")
        return
    kind = search.get("type")
    if kind not in SEARCH_ALGS:
        ctx.problem(
            (*path, "type"),
            f"unknown search_alg {kind!r}",
            hint=_hint(str(kind), list(SEARCH_ALGS)),
        )
    elif on_ray and kind not in RAY_SEARCH_ALGS:
        ctx.problem(
            (*path, "type"),
            f"search_alg {kind} is not run by ludwig_nb's ray executor",
            hint=f"use one of: {', '.join(RAY_SEARCH_ALGS)} (optuna = Ray Tune's OptunaSearch, "
            "TPE), or executor type local",
        )
    elif SEARCH_ALGS[kind] is None:
        local = [k for k, v in SEARCH_ALGS.items() if v is not None]
        ctx.problem(
            (*path, "type"),
            f"search_alg {kind} is not available in the local executor",
            hint=f"use one of: {', '.join(local)} (optuna = TPE)",
        )
    seed = search.get("random_state_seed", search.get("seed"))
    if seed is not None and not (isinstance(seed, int) and not isinstance(seed, bool)):
        ctx.problem((*path, "random_state_seed"), f"the seed must be an integer, not {seed!r}")


def _check_points(section: dict[str, Any], ctx: Ctx) -> None:
    """``search_alg.points_to_evaluate``: trials to run first, each naming known parameters."""
    search = section.get("search_alg")
    points = search.get("points_to_evaluate") if isinstance(search, dict) else None
    if points is None:
        return
    path: KeyPath = ("hyperopt", "search_alg", "points_to_evaluate")
    if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
        ctx.problem(path, "points_to_evaluate is a list of {parameter: value} mappings")
        return
    names = list(section.get("parameters") or {})
    for i, point in enumerate(points):
        for key in point:
            if key not in names:
                ctx.problem(
                    (*path, i, key),
                    f"points_to_evaluate[{i}] sets {key!r}, which is not a searched parameter",
                    hint=_hint(str(key), names),
                    key=True,
                )


def _check_executor(executor: object, ctx: Ctx) -> None:
    path: KeyPath = ("hyperopt", "executor")
    if not isinstance(executor, dict):
        ctx.problem(path, "executor must be a mapping: {type: local, num_samples: 10}")
        return
    for key in executor:
        if key not in _EXECUTOR_KEYS:
            ctx.problem(
                (*path, key),
                f"unknown executor key {key!r}",
                hint=_hint(key, _EXECUTOR_KEYS),
                key=True,
            )
    kind = executor.get("type")
    if kind not in EXECUTORS:
        ctx.problem((*path, "type"), f"unknown executor {kind!r}", hint=_hint(str(kind), EXECUTORS))
    elif (
        kind != "ray"
        and _number(executor.get("gpu_resources_per_trial"))
        and (executor["gpu_resources_per_trial"] > 1)
    ):
        ctx.problem(
            (*path, "gpu_resources_per_trial"),
            "the local executor trains each trial on one device: gpu_resources_per_trial "
            "above 1 would hold GPUs no trial uses",
            hint="use 1 (a GPU per trial) or a fraction (trials share a GPU, e.g. 0.5: two "
            "per GPU)",
        )
    samples = executor.get("num_samples")
    if not (isinstance(samples, int) and not isinstance(samples, bool) and samples >= 1):
        ctx.problem(
            (*path, "num_samples"), f"num_samples must be a whole number >= 1, not {samples!r}"
        )
    budget = executor.get("time_budget_s")
    if budget is not None and not (_number(budget) and budget > 0):
        ctx.problem(
            (*path, "time_budget_s"),
            f"time_budget_s must be a positive number of seconds, not {budget!r}",
        )
    concurrent = executor.get("max_concurrent_trials")
    if concurrent != "auto" and not (
        isinstance(concurrent, int) and not isinstance(concurrent, bool) and concurrent >= 1
    ):
        ctx.problem(
            (*path, "max_concurrent_trials"),
            f"max_concurrent_trials must be auto or a whole number >= 1, not {concurrent!r}",
        )
    for key in ("cpu_resources_per_trial", "gpu_resources_per_trial"):
        value: Any = executor.get(key)
        if not (_number(value) and value >= 0):
            ctx.problem((*path, key), f"{key} must be a number >= 0, not {value!r}")
    gpus: Any = executor.get("gpu_resources_per_trial")
    if _number(gpus) and gpus > 1 and not float(gpus).is_integer():
        ctx.problem(
            (*path, "gpu_resources_per_trial"),
            "above 1, gpu_resources_per_trial must be whole GPUs",
        )
    _check_storage_path(executor, ctx, kind == "ray")
    _check_scheduler(executor.get("scheduler"), ctx, kind == "ray")


def _check_storage_path(executor: dict[str, Any], ctx: Ctx, on_ray: bool) -> None:
    """``storage_path``: a path string, for the ray executor only (its trials' run folders)."""
    path: KeyPath = ("hyperopt", "executor", "storage_path")
    storage = executor.get("storage_path")
    if storage is None:
        return
    if not isinstance(storage, str) or not storage.strip():
        ctx.problem(path, f"storage_path must be a directory path, not {storage!r}")
    elif not on_ray:
        ctx.problem(
            path,
            "storage_path is where Ray Tune trials on other nodes write their run folders; "
            "the local executor's trials write the search directory",
            hint="use executor type ray, or leave storage_path out",
        )


def _check_scheduler(scheduler: Any, ctx: Ctx, on_ray: bool = False) -> None:
    path: KeyPath = ("hyperopt", "executor", "scheduler")
    if not isinstance(scheduler, dict):
        ctx.problem(path, "scheduler must be a mapping: {type: async_hyperband}")
        return
    kind = scheduler.get("type")
    if kind not in SCHEDULERS:
        ctx.problem(
            (*path, "type"), f"unknown scheduler {kind!r}", hint=_hint(str(kind), list(SCHEDULERS))
        )
    elif SCHEDULERS[kind] is None or (on_ray and kind not in RAY_SCHEDULERS):
        local = [k for k, v in SCHEDULERS.items() if v is not None]
        ctx.problem(
            (*path, "type"),
            f"scheduler {kind} is not available in the {'ray' if on_ray else 'local'} executor",
            hint=f"use one of: {', '.join(RAY_SCHEDULERS if on_ray else local)}",
        )
    for key in ("grace_period", "max_t", "reduction_factor", "min_samples_required", "brackets"):
        value = scheduler.get(key)
        if value is not None and not (_number(value) and value > 0):
            ctx.problem((*path, key), f"{key} must be a positive number, not {value!r}")
    time_attr = scheduler.get("time_attr")
    if time_attr not in (None, "training_iteration", "epoch"):
        ctx.problem(
            (*path, "time_attr"),
            f"time_attr {time_attr!r}: the local executor counts evaluations (epochs)",
            hint="use time_attr: training_iteration (one per evaluation) or leave it out",
        )


# -- substitution ------------------------------------------------------------------------------
def apply_parameters(
    config: dict[str, object],
    parameters: dict[str, object],
    rendered: dict[str, object] | None = None,
) -> dict[str, Any]:
    """A copy of ``config`` (without ``hyperopt``) with ``parameters`` substituted, in order.

    Keys are Ludwig's: ``trainer.learning_rate``, ``<feature>.encoder.type``, ``.`` (merge a
    whole mapping into the config), ``defaults.<type>.<section>.<key>``. A block the user
    did not write (``combiner`` for ``combiner.output_size``) is created with the ``type``
    that ``rendered`` (the same config with its defaults filled in) gives it.
    """
    out = copy.deepcopy({k: v for k, v in config.items() if k != "hyperopt"})

    def by_name(cfg: dict[str, Any]) -> dict[str, Any]:
        return {
            f["name"]: f for f in [*cfg.get("input_features", []), *cfg.get("output_features", [])]
        }

    features = by_name(out)
    shown = by_name(rendered) if rendered else {}
    for name, value in parameters.items():
        if name == ".":
            if isinstance(value, dict):
                _merge(out, copy.deepcopy(value))
            continue
        parts = name.split(".")
        is_feature = parts[0] in features
        node: dict[str, Any] = features[parts[0]] if is_feature else out
        full: Any = shown.get(parts[0]) if is_feature else rendered
        keys = parts[1:] if is_feature else parts
        for key in keys[:-1]:
            full = full.get(key) if isinstance(full, dict) else None
            child = node.get(key)
            if not isinstance(child, dict):
                typed = isinstance(full, dict) and full.get("type") is not None
                child = {"type": full["type"]} if typed else {}
                node[key] = child
            node = child
        if isinstance(value, dict) and isinstance(node.get(keys[-1]), dict):
            _merge(node[keys[-1]], copy.deepcopy(value))
        else:
            node[keys[-1]] = copy.deepcopy(value)
    return out


def _merge(into: dict[str, Any], update: dict[str, object]) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
