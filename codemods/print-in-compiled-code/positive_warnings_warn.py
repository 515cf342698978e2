# `warnings.warn` in forward: graph break GB0007.
# tcfix: TCF101 (high), fix guards the statement (the surrounding `if` on a shape stays as it is).
import warnings

import torch
from torch import nn


class PatchEmbed(nn.Module):
    def __init__(self, patch: int, channels: int, dim: int):
        super().__init__()
        self.patch = patch
        self.proj = nn.Conv2d(channels, dim, kernel_size=patch, stride=patch)

    def forward(self, images):
        if images.shape[-1] % self.patch != 0:
            warnings.warn("image width is not a multiple of the patch size; the border is dropped")
        return self.proj(images).flatten(2).transpose(1, 2)
