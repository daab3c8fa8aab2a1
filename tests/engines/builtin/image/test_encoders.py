"""The image encoders: shapes, Ludwig's parameter rules, and the uint8 -> float front end."""

from __future__ import annotations

import pytest
import torch

from ludwig_nb.config import load_config
from ludwig_nb.engines.builtin.image.cnn import Stacked2DCNN, conv_layer_specs
from ludwig_nb.engines.builtin.image.encoders import ImageInput, build_image_encoder
from ludwig_nb.engines.builtin.image.resnet_legacy import LegacyResNet

META = {"height": 16, "width": 16, "num_channels": 3, "mean": None, "std": None}


def _feature(**encoder):
    config = {
        "input_features": [{"name": "img", "type": "image", "encoder": encoder}],
        "output_features": [{"name": "y", "type": "category"}],
    }
    return load_config(config).to_dict()["input_features"][0]


def _params(**encoder):
    return _feature(**encoder)["encoder"]


def test_stacked_cnn_defaults_are_ludwigs_two_layers_of_32_and_64():
    specs = conv_layer_specs(_params(type="stacked_cnn"))
    assert [s["out_channels"] for s in specs] == [32, 64]
    assert all(s["pool_kernel_size"] == 2 and s["pool_stride"] == 2 for s in specs)
    model = Stacked2DCNN(_params(type="stacked_cnn"), (3, 16, 16))
    # 16 -conv3-> 14 -pool-> 7 -conv3-> 5 -pool-> 2: 64 x 2 x 2 into FC 128
    assert model.fc.stack[0].layers[0].in_features == 64 * 2 * 2
    assert model(torch.rand(2, 3, 16, 16)).shape == (2, 128)


def test_stacked_cnn_num_conv_layers_and_explicit_layers():
    three = conv_layer_specs(_params(type="stacked_cnn", num_conv_layers=3, out_channels=8))
    assert [s["out_channels"] for s in three] == [8, 8, 8]
    layers = [{"out_channels": 4, "pool_function": "avg"}, {"out_channels": 6, "norm": "batch"}]
    params = _params(type="stacked_cnn", conv_layers=layers, num_fc_layers=2, output_size=10)
    model = Stacked2DCNN(params, (1, 16, 16))
    kinds = [type(m).__name__ for m in model.conv.modules()]
    assert "AvgPool2d" in kinds and "BatchNorm2d" in kinds
    assert len(model.fc.stack) == 2 and model.output_size == 10


def test_stacked_cnn_says_when_the_layers_eat_the_image():
    with pytest.raises(ValueError, match="shrink 4 x 4 images to nothing"):
        Stacked2DCNN(_params(type="stacked_cnn"), (3, 4, 4))


@pytest.mark.parametrize(("size", "blocks", "bottleneck"), [(8, 5, False), (50, 16, True)])
def test_resnet_legacy_block_counts(size, blocks, bottleneck):
    model = LegacyResNet(
        _params(type="_resnet_legacy", resnet_size=size, out_channels=4), (3, 8, 8)
    )
    found = [m for m in model.modules() if type(m).__name__ == "_Block"]
    assert len(found) == blocks
    assert (len(found[0].body) == 8) is bottleneck  # 3 convs, 3 norms, 2 ReLUs
    assert model(torch.rand(2, 3, 8, 8)).shape == (2, 128)


def test_resnet_legacy_passes_ludwigs_batch_norm_arguments_as_they_are():
    model = LegacyResNet(_params(type="_resnet_legacy", resnet_size=8), (1, 8, 8))
    norm = next(m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d))
    assert (norm.momentum, norm.eps) == (0.9, 0.001)


def test_resnet_legacy_refuses_sizes_ludwig_lacks():
    with pytest.raises(ValueError, match="no resnet_size 20"):
        LegacyResNet({"resnet_size": 20}, (3, 8, 8))


def test_mlp_mixer_and_vit_shapes_and_their_size_rules():
    mixer = build_image_encoder(_feature(type="mlp_mixer", patch_size=4, num_layers=2), META)
    assert mixer(torch.randint(0, 255, (2, 3, 16, 16), dtype=torch.uint8)).shape == (2, 512)
    with pytest.raises(ValueError, match="patch_size 16 must divide"):
        build_image_encoder(_feature(type="mlp_mixer"), {**META, "height": 24, "width": 24})
    vit = _feature(
        type="_vit_legacy",
        use_pretrained=False,
        patch_size=4,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
    )
    assert build_image_encoder(vit, META)(torch.rand(2, 3, 16, 16)).shape == (2, 32)
    with pytest.raises(ValueError, match="square"):
        build_image_encoder(vit, {**META, "width": 20})


def test_vit_legacy_pretrained_is_refused_by_name():
    with pytest.raises(ValueError, match="use_pretrained: false"):
        build_image_encoder(_feature(type="_vit_legacy"), META)


def test_vit_legacy_trainable_false_freezes_it():
    vit = _feature(
        type="_vit_legacy",
        use_pretrained=False,
        trainable=False,
        patch_size=8,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
    )
    module = build_image_encoder(vit, META)
    assert not any(p.requires_grad for p in module.encoder.parameters())


def test_the_front_end_scales_standardises_and_augments_only_in_training():
    seen = []

    class Probe(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.output_size = 1

        def forward(self, x):
            seen.append(x)
            return x.mean(dim=(1, 2, 3)).unsqueeze(1)

    meta = {**META, "mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25]}
    module = ImageInput(Probe(), meta, [{"type": "random_brightness", "min": 3.0, "max": 3.0}])
    pixels = torch.full((64, 3, 2, 2), 51, dtype=torch.uint8)  # 0.2 once scaled
    module.eval()(pixels)
    assert torch.allclose(seen[-1], torch.full_like(seen[-1], (0.2 - 0.5) / 0.25))
    module.train()(pixels)
    brightened = (seen[-1] * 0.25 + 0.5)[:, 0, 0, 0]
    assert ((brightened - 0.6).abs() < 1e-5).any() and ((brightened - 0.2).abs() < 1e-5).any()
    assert "mean" not in module.state_dict()  # comes from the metadata, not the weights


def test_the_torchvision_families_need_torchvision():
    try:
        import torchvision  # noqa: F401
    except Exception:
        with pytest.raises(ValueError, match="needs torchvision"):
            build_image_encoder(_feature(type="resnet", use_pretrained=False), META)
    else:
        pytest.skip("torchvision loads here: tests/engines/builtin/image/test_torchvision.py")


def test_the_fc_layers_start_as_ludwigs_zero_biases_unless_named():
    model = Stacked2DCNN(_params(type="stacked_cnn"), (1, 16, 16))
    linear = model.fc.stack[0].layers[0]
    assert torch.count_nonzero(linear.bias) == 0
    ones = Stacked2DCNN(_params(type="stacked_cnn", fc_bias_initializer="ones"), (1, 16, 16))
    assert torch.all(ones.fc.stack[0].layers[0].bias == 1.0)
    resnet = LegacyResNet(_params(type="_resnet_legacy", resnet_size=8), (1, 8, 8))
    assert torch.count_nonzero(resnet.fc.stack[0].layers[0].bias) == 0
