"""What of an image input the built-in engine runs: its half of the engine's capabilities.

Imports nothing heavy: torchvision (and with it torch) only when the config names one of its
families, to say whether it loads here and whether pretrained weights can be had within seconds.
Problems go to the capabilities' reporter, located at the config's keys: what Ludwig runs and
this engine does not is ``UnsupportedByEngine`` (``engine: auto`` then picks Ludwig when it is
installed); pretrained weights that cannot be had are a plain located error (Ludwig could not
fetch them either).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from typing import Any

from ludwig_nb.config.yaml_positions import KeyPath
from ludwig_nb.engines.builtin.image.families import VARIANTS

__all__ = [
    "AUGMENTATIONS",
    "FILL_STRATEGIES",
    "OWN_IMAGE_ENCODERS",
    "TORCHVISION_FAMILIES",
    "check_image_input",
    "image_inputs",
]

#: Ludwig's own image encoders, in plain torch here
OWN_IMAGE_ENCODERS = ("stacked_cnn", "_resnet_legacy", "mlp_mixer", "_vit_legacy")
#: torchvision's families (run when torchvision loads)
TORCHVISION_FAMILIES = tuple(VARIANTS)
#: Ludwig 0.11's augmentation operations that run here (``auto_augmentation`` needs torchvision)
AUGMENTATIONS = (
    "random_horizontal_flip",
    "random_vertical_flip",
    "random_rotate",
    "random_blur",
    "random_brightness",
    "random_contrast",
)
#: missing-value strategies of an image input
FILL_STRATEGIES = ("bfill", "ffill", "fill_with_mode", "fill_with_const", "drop_row")
_OWN = ", ".join(OWN_IMAGE_ENCODERS)
_TORCHVISION_HINT = (
    "install the torchvision build that matches your torch (see pytorch.org/get-started), or "
    f"use engine: ludwig; without torchvision the built-in engine runs {_OWN}"
)

#: the capabilities' reporter: ``report(path, message, *, also, engine_hint, unsupported)``
Report = Callable[..., None]


def image_inputs(config: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The config's image input features (cheap: a look at the config)."""
    return [f for f in config.get("input_features") or [] if f.get("type") == "image"]


def check_image_input(feature: dict[str, Any], path: KeyPath, report: Report) -> None:
    """Report what of the image input ``feature`` (at ``path``) this engine cannot run."""
    name = f"input feature '{feature.get('name')}'"
    encoder = feature.get("encoder") or {}
    kind = encoder.get("type")
    if kind in TORCHVISION_FAMILIES:
        _torchvision(encoder, (*path, "encoder"), name, report)
    if kind == "_vit_legacy" and encoder.get("use_pretrained", True):
        report(
            (*path, "encoder", "use_pretrained"),
            f"{name}: _vit_legacy's pretrained weights come from the Hugging Face hub, which "
            "the built-in engine does not read",
            engine_hint="set use_pretrained: false to train it from scratch here, or use "
            "engine: ludwig",
        )
    for i, op in enumerate(feature.get("augmentation") or []):
        if isinstance(op, dict) and op.get("type") not in AUGMENTATIONS:
            report(
                (*path, "augmentation", i, "type"),
                f"{name}: the {op.get('type')} augmentation is not run by the built-in engine",
                also=AUGMENTATIONS,
            )
    _preprocessing(feature.get("preprocessing") or {}, (*path, "preprocessing"), name, report)


def _preprocessing(prep: dict[str, Any], path: KeyPath, name: str, report: Report) -> None:
    if prep.get("num_classes") is not None or prep.get("infer_image_num_classes"):
        key = "num_classes" if prep.get("num_classes") is not None else "infer_image_num_classes"
        report(
            (*path, key),
            f"{name}: images as class masks ({key}) are not read by the built-in engine",
        )
    strategy = prep.get("missing_value_strategy")
    if strategy is not None and strategy not in FILL_STRATEGIES:
        report(
            (*path, "missing_value_strategy"),
            f"{name}: missing_value_strategy {strategy} does not apply to images here",
            also=FILL_STRATEGIES,
        )


def _torchvision(encoder: dict[str, Any], path: KeyPath, name: str, report: Report) -> None:
    kind = str(encoder.get("type"))
    variant = str(encoder.get("model_variant"))
    if variant not in VARIANTS[kind]:
        report(
            (*path, "model_variant"),
            f"{name}: {kind} has no model_variant {variant}",
            also=VARIANTS[kind],
            engine_hint=f"{kind}'s variants are listed below",
            unsupported=False,
        )
        return
    problem = _torchvision_problem()
    if problem is not None:
        report(
            (*path, "type"),
            f"{name}: the {kind} image encoder needs torchvision ({problem})",
            engine_hint=_TORCHVISION_HINT,
        )
        return
    from ludwig_nb.engines.builtin.image.torchvision_encoders import pretrained_problem

    missing = pretrained_problem(encoder)
    if missing is not None:
        report(
            (*path, "use_pretrained"),
            f"{name}: {missing}",
            engine_hint="the weights must be on this machine before the run starts",
            unsupported=False,
        )


def _torchvision_problem() -> str | None:
    if importlib.util.find_spec("torchvision") is None:
        return "torchvision is not installed"
    from ludwig_nb.engines.builtin.image.torchvision_encoders import torchvision_problem

    return torchvision_problem()
