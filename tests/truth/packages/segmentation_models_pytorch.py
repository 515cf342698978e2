"""segmentation_models_pytorch 0.6.0: every architecture on a resnet18 encoder (`encoder_weights=None`),
plus Unet on a few other encoder families. Inputs: 64x64 images (a multiple of every architecture's
output stride; PAN 128), batch 2 then 3.
"""
from __future__ import annotations

import torch

from . import Case

ARCHITECTURES = ("Unet", "UnetPlusPlus", "MAnet", "Linknet", "FPN", "PSPNet", "DeepLabV3", "DeepLabV3Plus",
                 "PAN", "UPerNet", "Segformer")

# Other encoder families, each on the plain Unet: its own code path in smp.encoders.
ENCODERS = ("mobilenet_v2", "efficientnet-b0", "timm-efficientnet-b0", "mit_b0", "tu-convnext_atto",
            "mobileone_s0")

# Left out: DPT wants a ViT encoder from timm at a fixed 518-pixel image, too slow to be worth a case.
LEFT_OUT = {}

SIZE = 64
# PAN pools the deepest feature map twice more: 64 pixels leave it 1x1, too small for its pyramid.
SIZES = {"PAN": 128}


def names() -> list[str]:
    listed = [f"{arch}+resnet18" for arch in ARCHITECTURES] + [f"Unet+{encoder}" for encoder in ENCODERS]
    return [n for n in listed if n not in LEFT_OUT]


def build(name: str) -> Case:
    import segmentation_models_pytorch as smp

    arch, encoder = name.split("+", 1)
    options = {"encoder_name": encoder, "encoder_weights": None, "classes": 2}
    torch.manual_seed(0)
    model = getattr(smp, arch)(**options).eval()

    size = SIZES.get(arch, SIZE)

    def make(batch):
        return lambda: ((torch.randn(batch, 3, size, size),), {})

    return Case(model=model, inputs=[make(2), make(3)], loss=lambda out: out.float().mean(), options=options)
