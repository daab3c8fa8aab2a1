"""Validate a whole document and render it: every section and default filled in.

``render(data, ctx)`` applies Ludwig's silent upgrades of old syntax (``upgrade``), then walks
the top level, the features (with ``defaults`` applied), the combiner, trainer, preprocessing
and the rest against Ludwig 0.11's own schema, plus our ``gpu_watch``; problems and notes go
to ``ctx``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ludwig_nb.config.gpu_watch import check_gpu_watch
from ludwig_nb.config.schema.features import check_defaults, check_feature
from ludwig_nb.config.schema.fields import Ctx, Param, suggest
from ludwig_nb.config.schema.ludwig_json import JObject, ludwig_spec
from ludwig_nb.config.upgrade import upgrade
from ludwig_nb.config.yaml_positions import KeyPath

__all__ = ["LUDWIG_VERSION", "SEARCH_ALG_KEYS_READ", "TOP_LEVEL_KEYS", "render"]

#: ``search_alg`` keys the local executor reads (search/local.py, search/space.py) that
#: Ludwig's schema lacks for some search types (``random`` has no seed field, ``optuna`` no
#: ``n_startup_trials``): load_config must not call them ignored
SEARCH_ALG_KEYS_READ = ("random_state_seed", "seed", "points_to_evaluate", "n_startup_trials")

#: the Ludwig release whose schema this package follows
LUDWIG_VERSION = "0.11.0"
TOP_LEVEL_KEYS = (
    "model_type",
    "input_features",
    "output_features",
    "combiner",
    "trainer",
    "preprocessing",
    "defaults",
    "hyperopt",
    "backend",
    "ludwig_version",
    "gpu_watch",
)
_SECTIONS = ("combiner", "trainer", "preprocessing", "hyperopt", "backend")


def render(data: Mapping[str, object], ctx: Ctx) -> dict[str, object]:
    """The rendered config; check ``ctx.problems`` before trusting it."""
    model_type = Param("ecd", choices=("ecd", "llm")).check(
        data.get("model_type", "ecd"), ("model_type",), ctx
    )
    if model_type not in ("ecd", "llm"):
        return {}
    config = upgrade(data, ctx)
    top = ludwig_spec(str(model_type))
    assert isinstance(top, JObject)
    _check_top_keys(config, top, ctx)
    # an LLM's defaults are checked against its own section below (a rendered LLM config,
    # loaded again by a pilot or a trial, carries Ludwig's LLM defaults, not ECD's)
    ecd_defaults = config.get("defaults") if model_type == "ecd" else None
    written_defaults, rendered_defaults = check_defaults(ecd_defaults, ("defaults",), ctx)
    out: dict[str, object] = {"model_type": model_type}
    for side in ("input_features", "output_features"):
        out[side] = _features(config, side, ctx, written_defaults if model_type == "ecd" else {})
    if isinstance(config.get("backend"), str):
        config["backend"] = {"type": config["backend"]}
    order = [k for k in TOP_LEVEL_KEYS if k in top.field_names]
    for key in [*order, *(k for k in top.field_names if k not in order)]:
        if key == "defaults":
            out["defaults"] = rendered_defaults
        spec = top.field(key)
        if key == "defaults" and model_type == "llm" and spec is not None:
            # an LLM's defaults are its own section (text: passthrough), not ECD's
            out["defaults"] = spec.check(config.get("defaults") or {}, ("defaults",), ctx)
        if key in ("model_type", "input_features", "output_features", "defaults") or spec is None:
            continue
        if key == "ludwig_version":
            out[key] = LUDWIG_VERSION  # Ludwig's upgrade stamps its own version on every config
        elif key in config:
            with ctx.muted(_read_by_search(config[key]) if key == "hyperopt" else []):
                out[key] = spec.check(config[key], (key,), ctx)
        elif key in ("hyperopt", "quantization", "model_parameters"):
            # Ludwig renders none of them unless written (its schema's "disabled" choice: null)
            out[key] = None
        elif getattr(spec, "has_default", False):
            out[key] = spec.default()
    if model_type == "llm":
        out[TRUST_REMOTE_CODE] = _trust_remote_code(config.get(TRUST_REMOTE_CODE), ctx)
    out["gpu_watch"] = check_gpu_watch(config.get("gpu_watch"), ("gpu_watch",), ctx)
    return out


#: an LLM config's permission to run a model's own code from its folder or the hub (as in
#: later Ludwig releases; 0.11 has no such key and never runs it): false unless written
TRUST_REMOTE_CODE = "trust_remote_code"


def _trust_remote_code(value: object, ctx: Ctx) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        ctx.problem((TRUST_REMOTE_CODE,), "trust_remote_code must be true or false")
        return False
    return value


def _read_by_search(section: object) -> list[KeyPath]:
    """The ``search_alg`` keys of ``section`` that the search reads beyond Ludwig's schema."""
    search = section.get("search_alg") if isinstance(section, Mapping) else None
    if not isinstance(search, Mapping):
        return []
    return [("hyperopt", "search_alg", k) for k in SEARCH_ALG_KEYS_READ if k in search]


def _check_top_keys(data: Mapping[str, object], top: JObject, ctx: Ctx) -> None:
    known = [*top.field_names, "gpu_watch"]
    if "base_model" in top.field_names:  # an LLM config
        known.append(TRUST_REMOTE_CODE)
    for key in data:
        if key not in known:
            ctx.note(
                (key,),
                f"'{key}' is not a Ludwig section: Ludwig ignores it, and so does ludwig_nb",
                hint=suggest(str(key), known) or "remove it",
            )


def _features(
    data: Mapping[str, object], side: str, ctx: Ctx, defaults: Mapping[str, object]
) -> list[dict[str, object]]:
    raw = data.get(side)
    if raw is None:
        where = "missing" if side not in data else "empty"
        ctx.problem(
            (side,),
            f"{side} is {where}: the config needs at least one",
            hint=f"e.g. {side}: [{{name: my_column, type: number}}]",
        )
        return []
    if not isinstance(raw, list):
        ctx.problem((side,), f"{side} must be a list of features (each '- name: ... type: ...')")
        return []
    if not raw:
        ctx.problem((side,), f"{side} is empty: the config needs at least one")
        return []
    if data.get("model_type") == "llm":
        spec = ludwig_spec("llm", side)
        rendered: list[dict[str, object]] = spec.check(raw, (side,), ctx)
        return rendered
    output = side == "output_features"
    features = (
        check_feature(item, (side, i), ctx, output=output, defaults=defaults)
        for i, item in enumerate(raw)
    )
    return [f for f in features if f is not None]
