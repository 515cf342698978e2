"""TCF205 positive: a quantizer that takes precomputed codes either as one tensor or as a list.

`codes` is `None` unless the caller passes codes; a list of per-stage tensors is stacked. Dynamo
guards on the list's length, so each new number of stages recompiles, but only for callers that
pass a list: the finding says so, since the default call never meets it.
"""
import torch
from torch import nn


class StagedQuantizer(nn.Module):
    def __init__(self, dim: int = 16, stages: int = 4, size: int = 32):
        super().__init__()
        self.books = nn.Parameter(torch.randn(stages, size, dim))

    def forward(self, x, codes=None):
        if isinstance(codes, list):
            codes = torch.stack(codes)
        if codes is None:
            codes = torch.cdist(x, self.books[0]).argmin(-1).unsqueeze(0)
        return self.books[0][codes[0]]


model = torch.compile(StagedQuantizer())
