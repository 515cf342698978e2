# A module-level `logger = logging.getLogger(__name__)` used in forward: graph break GB0291.
# tcfix: TCF101 (high) on `logger.warning()`, fix guards it (the `if` that decides to warn stays).
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class PositionalEmbedding(nn.Module):
    def __init__(self, max_len: int, dim: int):
        super().__init__()
        self.max_len = max_len
        self.embed = nn.Embedding(max_len, dim)

    def forward(self, x):
        seq_len = x.size(1)
        if seq_len > self.max_len:
            logger.warning("sequence of %d tokens is longer than max_len %d", seq_len, self.max_len)
        positions = torch.arange(seq_len, device=x.device) % self.max_len
        return x + self.embed(positions)
