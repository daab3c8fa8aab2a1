"""torchvision's families as image encoders.

The ``torchvision`` tests need a torchvision that loads with the installed torch: they run in the
Ludwig venv (torch 2.14.1 + torchvision 0.29.1, scripts/ci/test_ludwig.sh), never in the main one,
where torchvision must stay absent (it breaks transformers' imports when it does not load).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from ludwig_nb.engines.builtin.image.families import FAMILIES, VARIANTS

PACKAGE = Path(__file__).resolve().parents[4] / "ludwig_nb"


def _torchvision_problem() -> str | None:
    from ludwig_nb.engines.builtin.image.torchvision_encoders import torchvision_problem

    return torchvision_problem()


needs_torchvision = pytest.mark.skipif(
    "_torchvision_problem() is not None", reason="needs a torchvision that loads"
)


def test_only_the_torchvision_encoders_import_torchvision():
    importers = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if re.search(r"^\s*(import|from) torchvision", path.read_text(), re.M)
    ]
    assert importers == ["engines/builtin/image/torchvision_encoders.py"]


def test_ludwigs_families_and_variants():
    assert set(FAMILIES) >= {
        "alexnet",
        "resnet",
        "efficientnet",
        "convnext",
        "vgg",
        "regnet",
        "vit",
    }
    assert VARIANTS["resnet"] == ("18", "34", "50", "101", "152")
    assert "101_328xd" in VARIANTS["resnext"]  # Ludwig's spelling, kept


def test_without_torchvision_the_problem_is_said_in_words():
    problem = _torchvision_problem()
    if problem is None:
        pytest.skip("torchvision loads here")
    assert problem.startswith("torchvision")


@pytest.mark.torchvision
@needs_torchvision
def test_every_variant_names_a_torchvision_function_and_weights():
    import torchvision.models as tvm

    for family, (_, variants) in FAMILIES.items():
        for variant, (function, weights) in variants.items():
            assert callable(getattr(tvm, function)), (family, variant)
            assert getattr(tvm, weights).DEFAULT.url, (family, variant)


@pytest.mark.torchvision
@needs_torchvision
def test_the_preset_is_the_weights_transforms():
    from ludwig_nb.engines.builtin.image.torchvision_encoders import preset_metadata

    meta = preset_metadata("resnet", 18)
    assert (meta["height"], meta["width"], meta["num_channels"], meta["shorter_side"]) == (
        224,
        224,
        3,
        256,
    )
    assert meta["mean"] == pytest.approx([0.485, 0.456, 0.406])
    assert meta["torchvision"] == {"type": "resnet", "variant": "18"}
    assert meta["interpolation"] == "bilinear"
    assert preset_metadata("swin_transformer", "t")["interpolation"] == "bicubic"


@pytest.mark.torchvision
@needs_torchvision
@pytest.mark.parametrize(
    ("family", "variant", "width"), [("resnet", "18", 512), ("mobilenetv3", "small", 1024)]
)
def test_the_head_is_dropped_and_the_width_measured(family, variant, width):
    import torch

    from ludwig_nb.engines.builtin.image.torchvision_encoders import TorchvisionEncoder

    params = {"type": family, "model_variant": variant, "use_pretrained": False}
    encoder = TorchvisionEncoder(params, (3, 64, 64))
    assert encoder.output_size == width
    assert encoder(torch.rand(2, 3, 64, 64)).shape == (2, width)
    frozen = TorchvisionEncoder({**params, "trainable": False}, (3, 64, 64))
    assert not any(p.requires_grad for p in frozen.parameters())


@pytest.mark.torchvision
@needs_torchvision
def test_pretrained_weights_come_from_the_hub_cache(tmp_path):
    import torch
    import torchvision.models as tvm

    from ludwig_nb.engines.builtin.image.torchvision_encoders import (
        TorchvisionEncoder,
        weights_file,
    )

    path, url = weights_file("resnet", 18, str(tmp_path))
    assert path.parent == tmp_path / "hub" / "checkpoints" and url.endswith(path.name)
    reference = tvm.resnet18(weights=None)
    path.parent.mkdir(parents=True)
    torch.save(reference.state_dict(), path)
    params = {"type": "resnet", "model_variant": 18, "use_pretrained": True}
    loaded = TorchvisionEncoder({**params, "model_cache_dir": str(tmp_path)}, (3, 224, 224))
    assert torch.equal(loaded.model.conv1.weight, reference.conv1.weight)


@pytest.mark.torchvision
@needs_torchvision
def test_missing_pretrained_weights_offline_fail_within_seconds(tmp_path, monkeypatch):
    from ludwig_nb.engines.builtin.image import torchvision_encoders

    monkeypatch.setattr(torchvision_encoders, "_reachable", lambda url, timeout=3.0: False)
    encoder = {
        "type": "efficientnet",
        "model_variant": "b0",
        "use_pretrained": True,
        "model_cache_dir": str(tmp_path),
    }
    began = time.monotonic()
    problem = torchvision_encoders.pretrained_problem(encoder)
    assert time.monotonic() - began < 5
    assert problem is not None and str(tmp_path / "hub" / "checkpoints") in problem
    assert "use_pretrained: false" in problem
    assert torchvision_encoders.pretrained_problem({**encoder, "use_pretrained": False}) is None


@pytest.mark.torchvision
@needs_torchvision
def test_the_reachability_probe_gives_up_within_its_timeout():
    from ludwig_nb.engines.builtin.image.torchvision_encoders import _reachable

    began = time.monotonic()
    _reachable("https://10.255.255.1/weights.pth", timeout=1.0)  # unroutable
    assert time.monotonic() - began < 3


@pytest.mark.torchvision
@needs_torchvision
def test_a_torchvision_encoder_trains_saves_and_loads(digits_csv, tmp_path):
    import pandas as pd

    from ludwig_nb.config import load_config
    from ludwig_nb.core.control import RunControl
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.engines.builtin import BuiltinEngine, load_model

    config = load_config(
        {
            "input_features": [
                {
                    "name": "image",
                    "type": "image",
                    "encoder": {
                        "type": "mobilenetv3",
                        "model_variant": "small",
                        "use_pretrained": False,
                    },
                }
            ],
            "output_features": [{"name": "label", "type": "category"}],
            "trainer": {"epochs": 1, "batch_size": 16, "eval_batch_size": 64},
        }
    ).to_dict()
    frame = pd.read_csv(digits_csv).head(48)
    engine = BuiltinEngine()
    data = engine.prepare_data(
        config, frame.assign(image=[str(digits_csv.parent / p) for p in frame["image"]])
    )
    events = []
    model = engine.fit(
        TrainJob(config=config, dataset=data, run_dir=tmp_path / "run", run_id="r", name="tv"),
        events.append,
        RunControl(),
    )
    assert events[-1].status == "completed"
    meta = model.metadata["features"]["image"]
    assert (meta["height"], meta["num_channels"], meta["standardize_image"]) == (
        224,
        3,
        "torchvision",
    )
    again = load_model(tmp_path / "run" / "model")
    assert (
        again.predict(data)["label_predictions"] == model.predict(data)["label_predictions"]
    ).all()
