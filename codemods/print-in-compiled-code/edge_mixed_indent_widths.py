# The file's first indented block (a try/except import fallback, vendored style) uses 2 spaces,
# the model code uses 4. The guard's body must be indented like its neighbours (4 more spaces),
# not with the 2-space unit of the first block.
# tcfix: TCF101 (high), fix guards the print with a 4-space step.
try:
  from apex.normalization import FusedLayerNorm as LayerNorm
except ImportError:
  from torch.nn import LayerNorm

import torch
from torch import nn


class PreNorm(nn.Module):
    def __init__(self, dim: int, fn: nn.Module):
        super().__init__()
        self.norm = LayerNorm(dim)
        self.fn = fn

    def forward(self, x):
        print("PreNorm", x.shape)
        return self.fn(self.norm(x))
