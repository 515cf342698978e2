"""torchvision 0.29.2: classification models from `list_models(module=torchvision.models)`, a few
segmentation, video and optical-flow models; `weights=None` everywhere (random weights, no download).

Generic rule: every classification model except the large variants of a family (LARGE: the size
words that only add width or depth to a family already listed). Inputs: 64x64 images, batch 2
then 3, unless the model fixes or needs a larger size (SIZES).
"""
from __future__ import annotations

import re

import torch

from . import Case

# Large variants skipped: the smaller members of the same family stay listed.
LARGE = re.compile(
    r"(convnext_(base|large|small)|swin_(v2_)?[bs]$|vit_[hl]_\d+|resnet101|resnet152|resnext101|wide_resnet101"
    r"|densenet(161|169|201)|efficientnet_b[3-7]|efficientnet_v2_[ml]|regnet_._(1_6|3_2|8|16|32|128)gf"
    r"|mnasnet(0_75|1_3)|shufflenet_v2_x(1_5|2_0)|vgg1[369])"
)

# Models that fix their input size or need more than 64 pixels; why in each.
SIZES = {
    "vit_b_16": 224,  # the position embedding is built for image_size=224
    "vit_b_32": 224,  # same
    "maxvit_t": 224,  # window partition sizes are fixed for 224
}

# Beyond classification: constructor, input shape per batch, and why it is worth a case.
EXTRA = {
    # dense prediction heads return an OrderedDict of maps
    "lraspp_mobilenet_v3_large": ("segmentation", (3, 64, 64)),
    "deeplabv3_mobilenet_v3_large": ("segmentation", (3, 64, 64)),
    "fcn_resnet50": ("segmentation", (3, 64, 64)),
    # 3-D convolutions over a clip: (channels, frames, height, width)
    "r3d_18": ("video", (3, 4, 32, 32)),
    "mc3_18": ("video", (3, 4, 32, 32)),
    "r2plus1d_18": ("video", (3, 4, 32, 32)),
    # RAFT iterates its update block in a Python loop over two frames
    "raft_small": ("optical_flow", (3, 128, 128)),
}

LEFT_OUT = {
    "inception_v3": "in train mode its aux head needs the full 299-pixel image; timm lists inception_v3",
}


def names() -> list[str]:
    import torchvision

    classify = [n for n in torchvision.models.list_models(module=torchvision.models) if not LARGE.search(n)]
    return [n for n in classify + list(EXTRA) if n not in LEFT_OUT]


def _first_tensor(output):
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, dict):
        return _first_tensor(next(iter(output.values())))
    if isinstance(output, (list, tuple)):
        return _first_tensor(output[-1] if all(isinstance(o, torch.Tensor) for o in output) else output[0])
    raise TypeError(f"no tensor in {type(output).__name__}")


def _loss(output):
    return _first_tensor(output).float().mean()


def build(name: str) -> Case:
    import torchvision

    kind, shape = EXTRA.get(name, ("classification", None))
    torch.manual_seed(0)
    if kind == "classification":
        size = SIZES.get(name, 64)
        shape = (3, size, size)
        model = torchvision.models.get_model(name, weights=None)
    else:
        module = getattr(torchvision.models, kind)
        kwargs = {"weights_backbone": None} if kind == "segmentation" else {}
        model = getattr(module, name)(weights=None, **kwargs)
    model.eval()
    pair = kind == "optical_flow"

    def make(batch):
        def inputs():
            if pair:
                return (torch.randn(batch, *shape), torch.randn(batch, *shape)), {"num_flow_updates": 4}
            return (torch.randn(batch, *shape),), {}

        return inputs

    return Case(model=model, inputs=[make(2), make(3)], loss=_loss, options={"weights": None})
