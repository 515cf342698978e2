"""TCF201 edge: the project's config class names a maximum length but gives it no usable default
(`max_seq_len: Optional[int] = None`, filled in from a checkpoint), and the table's module knows none.

tcfix should report the growth without a fix and say which number is missing: there is no length to
pre-grow to.
"""
from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn


@dataclass
class EncoderConfig:
    dim: int = 16
    max_seq_len: Optional[int] = None


class LearnedLookupPositions(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.register_buffer("table", torch.empty(0, dim), persistent=False)

    def _ensure_cache(self, seq_len, device, dtype):
        if self.table.size(0) >= seq_len:
            return
        self.table = torch.linspace(0, 1, seq_len * self.dim, device=device, dtype=dtype).view(seq_len, self.dim)

    def forward(self, x):
        self._ensure_cache(x.size(1), x.device, x.dtype)
        return x + self.table[: x.size(1)]
