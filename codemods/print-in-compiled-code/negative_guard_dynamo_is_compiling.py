# Older code (torch <= 2.2) guards with `torch._dynamo.is_compiling()`.
# tcfix: no TCF101 finding.
import torch
from torch import nn


class LayerScale(nn.Module):
    def __init__(self, dim: int, init: float = 1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init * torch.ones(dim))

    def forward(self, x):
        if not torch._dynamo.is_compiling():
            print("LayerScale gamma", self.gamma.abs().max())
        return x * self.gamma
