# The print is already under `if not torch.compiler.is_compiling():`, the logger call under
# `if self.verbose and not torch.compiler.is_compiling():`.
# tcfix: no TCF101 finding.
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Block(nn.Module):
    def __init__(self, dim: int, verbose: bool = False):
        super().__init__()
        self.verbose = verbose
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        if not torch.compiler.is_compiling():
            print("Block input", x.shape)
        y = x + self.ff(x)
        if self.verbose and not torch.compiler.is_compiling():
            logger.info("Block output norm %s", y.norm())
        return y
