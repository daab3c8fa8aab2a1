"""torchvision's model families as Ludwig 0.11 names them: a table, importing nothing heavy.

``family -> (how its classifier head is reached, {model_variant: (torchvision function, weights
enum)})``; torchvision_encoders.py builds them, the built-in engine's capabilities name them.
"""

from __future__ import annotations

__all__ = ["FAMILIES", "VARIANTS"]

_V = dict[str, tuple[str, str]]  # variant -> (model function, weights enum)


#: family -> (how its head is reached, {variant: (torchvision function, weights enum)})
FAMILIES: dict[str, tuple[str, _V]] = {
    "alexnet": ("classifier[-1]", {"base": ("alexnet", "AlexNet_Weights")}),
    "convnext": (
        "classifier[-1]",
        {
            v: (f"convnext_{v}", f"ConvNeXt_{v.title()}_Weights")
            for v in ("tiny", "small", "base", "large")
        },
    ),
    "densenet": (
        "classifier",
        {v: (f"densenet{v}", f"DenseNet{v}_Weights") for v in ("121", "161", "169", "201")},
    ),
    "efficientnet": (
        "classifier[-1]",
        {
            v: (f"efficientnet_{v}", f"EfficientNet_{v.upper()}_Weights")
            for v in ("b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "v2_s", "v2_m", "v2_l")
        },
    ),
    "googlenet": ("fc", {"base": ("googlenet", "GoogLeNet_Weights")}),
    "inceptionv3": ("fc", {"base": ("inception_v3", "Inception_V3_Weights")}),
    "maxvit": ("classifier[-1]", {"t": ("maxvit_t", "MaxVit_T_Weights")}),
    "mnasnet": (
        "classifier[-1]",
        {v: (f"mnasnet{v}", f"MNASNet{v}_Weights") for v in ("0_5", "0_75", "1_0", "1_3")},
    ),
    "mobilenetv2": ("classifier[-1]", {"base": ("mobilenet_v2", "MobileNet_V2_Weights")}),
    "mobilenetv3": (
        "classifier[-1]",
        {v: (f"mobilenet_v3_{v}", f"MobileNet_V3_{v.title()}_Weights") for v in ("small", "large")},
    ),
    "regnet": (
        "fc",
        {
            v: (f"regnet_{v}", f"RegNet_{v.upper()}_Weights")
            for v in (
                "x_16gf",
                "x_1_6gf",
                "x_32gf",
                "x_3_2gf",
                "x_400mf",
                "x_800mf",
                "x_8gf",
                "y_128gf",
                "y_16gf",
                "y_1_6gf",
                "y_32gf",
                "y_3_2gf",
                "y_400mf",
                "y_800mf",
                "y_8gf",
            )
        },
    ),
    "resnet": (
        "fc",
        {v: (f"resnet{v}", f"ResNet{v}_Weights") for v in ("18", "34", "50", "101", "152")},
    ),
    "resnext": (
        "fc",
        {
            "50_32x4d": ("resnext50_32x4d", "ResNeXt50_32X4D_Weights"),
            "101_328xd": ("resnext101_32x8d", "ResNeXt101_32X8D_Weights"),
            "101_64x4d": ("resnext101_64x4d", "ResNeXt101_64X4D_Weights"),
        },
    ),
    "shufflenet_v2": (
        "fc",
        {
            v: (f"shufflenet_v2_{v}", f"ShuffleNet_V2_{v.upper()}_Weights")
            for v in ("x0_5", "x1_0", "x1_5", "x2_0")
        },
    ),
    "squeezenet": ("", {v: (f"squeezenet{v}", f"SqueezeNet{v}_Weights") for v in ("1_0", "1_1")}),
    "swin_transformer": (
        "head",
        {v: (f"swin_{v}", f"Swin_{v.upper()}_Weights") for v in ("t", "s", "b")},
    ),
    "vgg": (
        "classifier[-1]",
        {
            v: (f"vgg{v}", f"VGG{v.upper()}_Weights")
            for v in ("11", "11_bn", "13", "13_bn", "16", "16_bn", "19", "19_bn")
        },
    ),
    "vit": (
        "heads[-1]",
        {
            v: (f"vit_{v}", f"ViT_{v.upper()}_Weights")
            for v in ("b_16", "b_32", "l_16", "l_32", "h_14")
        },
    ),
    "wide_resnet": (
        "fc",
        {v: (f"wide_resnet{v}", f"Wide_ResNet{v.upper()}_Weights") for v in ("50_2", "101_2")},
    ),
}

#: family -> its model_variant values, as Ludwig writes them
VARIANTS = {family: tuple(variants) for family, (_, variants) in FAMILIES.items()}
