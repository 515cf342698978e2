"""TCF202 negative: hooks that read module-level constants assigned once and never rebound — a
functional alias (`F = nn.functional`) and a constant normalisation tensor. Dynamo guards on them, but
they never change, so the hooks never recompile; disabling them would only add graph breaks.

tcfix should report nothing for TCF202.
"""
import torch
from torch import nn

F = nn.functional
IMAGENET_MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
IMAGENET_STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def normalize_pre_hook(module: nn.Module, args):
    (images,) = args
    mean = IMAGENET_MEAN.to(device=images.device, dtype=images.dtype)
    std = IMAGENET_STD.to(device=images.device, dtype=images.dtype)
    return ((images - mean) / std,)


def gelu_output_hook(module: nn.Module, inputs, output: torch.Tensor) -> torch.Tensor:
    return F.gelu(output)


def prepare(backbone: nn.Module, head: nn.Module) -> None:
    backbone.register_forward_pre_hook(normalize_pre_hook)
    head.register_forward_hook(gelu_output_hook)
