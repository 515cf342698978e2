"""kornia 0.9.0: nn.Modules that take an image batch: local-feature networks and descriptors
(kornia.feature, on 32x32 grey patches), filters, colour and enhancement ops, and augmentation
pipelines (on RGB images). Patch networks see batch 2 then 3 at a fixed size; image ops also change
the image size (64 then 48), as they accept any.

Modules without parameters get inputs that require grad, so that the training step has a gradient
to take (an augmentation or filter sits in front of a network that trains).
"""
from __future__ import annotations

import torch

from . import Case


def _models():
    import kornia.augmentation as K
    import kornia.color as color
    import kornia.enhance as enhance
    import kornia.feature as feature
    import kornia.filters as filters

    # name -> (constructor, input kind); "patch": (B, 1, 32, 32); "grey"/"rgb": images of any size
    return {
        "feature.HardNet": (lambda: feature.HardNet(pretrained=False), "patch"),
        "feature.HardNet8": (lambda: feature.HardNet8(pretrained=False), "patch"),
        "feature.TFeat": (lambda: feature.TFeat(pretrained=False), "patch"),
        "feature.SOSNet": (lambda: feature.SOSNet(pretrained=False), "patch"),
        "feature.HyNet": (lambda: feature.HyNet(pretrained=False), "patch"),
        "feature.SIFTDescriptor": (lambda: feature.SIFTDescriptor(32), "patch"),
        # whitening=None: its default whitening downloads fitted weights
        "feature.MKDDescriptor": (lambda: feature.MKDDescriptor(32, whitening=None), "patch"),
        "feature.DenseSIFTDescriptor": (lambda: feature.DenseSIFTDescriptor(), "grey"),
        "feature.BlobHessian": (lambda: feature.BlobHessian(), "grey"),
        "feature.CornerHarris": (lambda: feature.CornerHarris(0.04), "grey"),
        "filters.GaussianBlur2d": (lambda: filters.GaussianBlur2d((5, 5), (1.5, 1.5)), "rgb"),
        "filters.Sobel": (lambda: filters.Sobel(), "rgb"),
        "filters.Laplacian": (lambda: filters.Laplacian(5), "rgb"),
        "filters.MedianBlur": (lambda: filters.MedianBlur((3, 3)), "rgb"),
        "filters.BilateralBlur": (lambda: filters.BilateralBlur((5, 5), 0.1, (1.5, 1.5)), "rgb"),
        "filters.Canny": (lambda: filters.Canny(), "rgb"),
        "filters.UnsharpMask": (lambda: filters.UnsharpMask((3, 3), (1.5, 1.5)), "rgb"),
        "color.RgbToHsv": (lambda: color.RgbToHsv(), "rgb"),
        "color.RgbToLab": (lambda: color.RgbToLab(), "rgb"),
        "enhance.Normalize": (lambda: enhance.Normalize(torch.full((3,), 0.5), torch.full((3,), 0.2)), "rgb"),
        "enhance.AdjustGamma": (lambda: enhance.AdjustGamma(0.8), "rgb"),
        # augmentation pipelines: random parameters drawn per call, as in a training loop
        "augmentation.flip_jitter": (lambda: K.AugmentationSequential(
            K.RandomHorizontalFlip(p=0.5), K.ColorJitter(0.2, 0.2, 0.2, 0.1, p=1.0)), "rgb"),
        "augmentation.affine_crop": (lambda: K.AugmentationSequential(
            K.RandomAffine(degrees=15.0, translate=(0.1, 0.1), p=1.0), K.RandomResizedCrop((32, 32), p=1.0)), "rgb"),
        "augmentation.RandomGaussianBlur": (lambda: K.RandomGaussianBlur((3, 3), (0.1, 2.0), p=1.0), "rgb"),
        "augmentation.RandomErasing": (lambda: K.RandomErasing(p=1.0), "rgb"),
    }


# Left out: enhance.ZCAWhitening must be fitted on data before it runs (no constructor option does it).
LEFT_OUT = {}


def names() -> list[str]:
    return [n for n in _models() if n not in LEFT_OUT]


SHAPES = {
    "patch": ((2, 1, 32, 32), (3, 1, 32, 32)),
    "grey": ((2, 1, 64, 64), (3, 1, 48, 48)),
    "rgb": ((2, 3, 64, 64), (3, 3, 48, 48)),
}


def _first_tensor(output):
    if isinstance(output, torch.Tensor):
        return output
    return _first_tensor(output[0])


def build(name: str) -> Case:
    make_model, kind = _models()[name]
    torch.manual_seed(0)
    model = make_model().eval()
    needs_grad = not any(True for _ in model.parameters())

    def make(shape):
        def inputs():
            image = torch.rand(*shape)
            return ((image.requires_grad_() if needs_grad else image),), {}

        return inputs

    return Case(model=model, inputs=[make(s) for s in SHAPES[kind]],
                loss=lambda out: _first_tensor(out).float().mean(), options={"input": kind})
