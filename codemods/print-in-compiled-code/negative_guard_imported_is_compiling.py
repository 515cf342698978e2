# The guard uses the imported name: `from torch.compiler import is_compiling`.
# tcfix: no TCF101 finding.
import logging

import torch
from torch import nn
from torch.compiler import is_compiling

logger = logging.getLogger(__name__)


class Adapter(nn.Module):
    def __init__(self, dim: int, rank: int = 8):
        super().__init__()
        self.down = nn.Linear(dim, rank, bias=False)
        self.up = nn.Linear(rank, dim, bias=False)

    def forward(self, x):
        delta = self.up(self.down(x))
        if not is_compiling():
            logger.debug("adapter delta norm %.4f", delta.norm().item())
        return x + delta
