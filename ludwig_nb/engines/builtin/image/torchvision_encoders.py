"""torchvision's model families as image encoders, when a torchvision that loads is installed.

Ludwig 0.11's families and variants (``type: resnet``, ``model_variant: 50``, ...), their
classifier head replaced by the identity, as Ludwig does. Each trains on its weights' preset
preprocessing whether pretrained or not (Ludwig's rule): 3 channels, the shorter side resized
to the preset's resize size with the preset's filter (bilinear, or bicubic for some), the
centre crop, the preset's mean and deviation.

``use_pretrained: true`` loads the weights from the torch hub cache (``model_cache_dir``/hub/
checkpoints, else ``torch.hub.get_dir()``/checkpoints); a file that is not there is downloaded
only when the download host answers within a few seconds, else :func:`pretrained_problem` says
where to put it. ``trainable: false`` freezes the network; ``saved_weights_in_checkpoint`` (set
in a saved model's config) skips the pretrained weights when the model's own are loaded next.

torchvision is never imported at this module's import.
"""

from __future__ import annotations

import functools
import socket
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import torch
from torch import nn

from ludwig_nb.engines.builtin.image.families import FAMILIES

__all__ = [
    "FAMILIES",
    "TorchvisionEncoder",
    "preset_metadata",
    "pretrained_problem",
    "torchvision_problem",
    "weights_file",
]

_PROBE_S = 3.0  # seconds the download host has to answer


@functools.lru_cache(maxsize=1)
def torchvision_problem() -> str | None:
    """Why torchvision cannot serve here (not installed, or does not load); None when it can."""
    try:
        import torchvision.models  # noqa: F401
    except ModuleNotFoundError:
        return "torchvision is not installed"
    except Exception as err:  # a build that does not match torch: RuntimeError, OSError
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        return (
            f"torchvision {_version('torchvision')} does not load with torch {torch.__version__} "
            f"({reason})"
        )
    return None


def _version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "(unknown version)"


def _weights(family: str, variant: Any) -> Any:
    import torchvision.models as tvm

    _, weights_name = FAMILIES[family][1][str(variant)]
    return getattr(tvm, weights_name).DEFAULT


def preset_metadata(family: str, variant: Any) -> dict[str, Any]:
    """The image metadata a torchvision family imposes (see the module text)."""
    preset = _weights(family, variant).transforms()
    return {
        "height": int(preset.crop_size[0]),
        "width": int(preset.crop_size[0]),
        "num_channels": 3,
        "shorter_side": int(preset.resize_size[0]),
        "interpolation": str(getattr(preset.interpolation, "value", "bilinear")),
        "standardize_image": "torchvision",
        "mean": [float(v) for v in preset.mean],
        "std": [float(v) for v in preset.std],
        "torchvision": {"type": family, "variant": str(variant)},
    }


def weights_file(family: str, variant: Any, cache_dir: str | None = None) -> tuple[Path, str]:
    """Where the pretrained weights go in the torch hub cache, and their URL."""
    url = str(_weights(family, variant).url)
    folder = Path(cache_dir) / "hub" if cache_dir else Path(torch.hub.get_dir())
    return folder / "checkpoints" / Path(urlparse(url).path).name, url


def _reachable(url: str, timeout: float = _PROBE_S) -> bool:
    """Whether the URL's host accepts a connection within ``timeout`` seconds (DNS included)."""
    parts = urlparse(url)
    result: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((parts.hostname or "", parts.port or 443), timeout):
                result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(result and result[0])


def pretrained_problem(encoder: Mapping[str, Any]) -> str | None:
    """Why the encoder's pretrained weights cannot be had (within seconds); None when they can."""
    if not encoder.get("use_pretrained") or encoder.get("saved_weights_in_checkpoint"):
        return None
    path, url = weights_file(
        str(encoder["type"]), encoder["model_variant"], encoder.get("model_cache_dir")
    )
    if path.is_file() or _reachable(url):
        return None
    return (
        f"the pretrained {encoder['type']} {encoder['model_variant']} weights are not in the "
        f"torch hub cache and {urlparse(url).hostname} cannot be reached: put {path.name} "
        f"(from {url}) at {path}, or set use_pretrained: false to train from scratch"
    )


class TorchvisionEncoder(nn.Module):
    """A torchvision family's network without its classifier: ``[batch, output_size]``.

    Args:
        params: The rendered ``encoder`` section (``type``, ``model_variant``, ...).
        shape: Input ``(channels, height, width)`` (the preset's).
    """

    def __init__(self, params: Mapping[str, Any], shape: tuple[int, int, int]):
        super().__init__()
        import torchvision.models as tvm

        family, variant = str(params["type"]), str(params["model_variant"])
        head, variants = FAMILIES[family]
        function, _ = variants[variant]
        kwargs: dict[str, Any] = {}
        if family == "vit" and not params.get("use_pretrained"):
            kwargs["image_size"] = shape[1]
        if family in ("googlenet", "inceptionv3"):
            kwargs.update(aux_logits=False, init_weights=True)
        self.model = getattr(tvm, function)(weights=None, **kwargs)
        if params.get("use_pretrained") and not params.get("saved_weights_in_checkpoint"):
            self._load_pretrained(family, variant, params.get("model_cache_dir"))
        _drop_head(self.model, head)
        self.model.requires_grad_(params.get("trainable", True) is not False)
        self.output_size = self._probe_width(shape)

    def _load_pretrained(self, family: str, variant: str, cache_dir: str | None) -> None:
        path, url = weights_file(family, variant, cache_dir)
        state = torch.hub.load_state_dict_from_url(
            url, model_dir=str(path.parent), progress=False, map_location="cpu"
        )
        missing, _ = self.model.load_state_dict(state, strict=False)
        if missing:
            raise ValueError(
                f"{path}: not the weights of {family} {variant} ({missing[0]!r} missing)"
            )

    def _probe_width(self, shape: tuple[int, int, int]) -> int:
        was = self.model.training
        self.model.eval()
        with torch.no_grad():
            out = self.model(torch.zeros(1, *shape))
        self.model.train(was)
        return int(out.flatten(1).shape[1])

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """``[B, output_size]`` of ``[B, 3, H, W]`` standardised images."""
        result: torch.Tensor = self.model(images)
        return result.flatten(1)


def _drop_head(model: nn.Module, head: str) -> None:
    """Replace the classifier (``fc``, ``classifier[-1]``, ...) by the identity."""
    if not head:
        return
    name, _, index = head.partition("[")
    if index:
        getattr(model, name)[int(index.rstrip("]"))] = nn.Identity()
    else:
        setattr(model, name, nn.Identity())
