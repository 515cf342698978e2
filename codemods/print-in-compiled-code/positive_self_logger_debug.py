# A logger stored on the module (`self.logger`) and called in forward: graph break GB0291.
# tcfix: TCF101 (high) on `self.logger.debug()`, fix guards it.
import logging

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim: int, layers: int):
        super().__init__()
        self.logger = logging.getLogger("encoder")
        self.layers = nn.Sequential(*[nn.Linear(dim, dim) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        self.logger.debug("encoder input mean=%s", x.mean())
        return self.norm(self.layers(x))
