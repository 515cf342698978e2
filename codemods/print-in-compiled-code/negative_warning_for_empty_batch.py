"""A forward that pads an empty batch and warns. Dynamo specializes sizes 0 and 1: `numel() == 0`
is decided while tracing a non-empty input, so the branch is traced only when the batch really
is empty, a degenerate call. No finding in either branch."""
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Encoder(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.embed = nn.Embedding(100, dim)

    def forward(self, ids: torch.Tensor):
        if ids is not None and torch.numel(ids) == 0:
            ids = torch.zeros((1, 4), dtype=ids.dtype, device=ids.device)
            logger.warning("empty batch, padded")
        if ids.shape[0] == 0:
            print("still empty")
        return self.embed(ids)
