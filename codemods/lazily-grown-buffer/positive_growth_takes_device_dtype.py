"""TCF201 positive: the growth routine takes the length, the device and the dtype
(`_ensure_cache(seq_len, device, dtype)`, called from forward with the input's), and the module
knows its maximum length (`max_len`).

tcfix should call `self._ensure_cache(max_len, self.table.device, self.table.dtype)` at the end of
`__init__` (Safe): the empty buffer's own device and dtype, so the table is built as the empty one
was typed, and a later `.to(...)` of the model moves and casts it as it would have the empty one.
"""
import math

import torch
from torch import nn


class SinusoidalPositions(nn.Module):
    def __init__(self, dim: int, max_len: int = 2048):
        super().__init__()
        self.dim = dim
        self.register_buffer("table", torch.empty(0, dim), persistent=False)

    def _ensure_cache(self, seq_len, device, dtype):
        if self.table.size(0) >= seq_len:
            return
        position = torch.arange(seq_len, device=device, dtype=torch.float32).unsqueeze(1)
        rates = torch.exp(torch.arange(0, self.dim, 2, device=device, dtype=torch.float32) * (-math.log(10000.0) / self.dim))
        table = torch.zeros(seq_len, self.dim, device=device)
        table[:, 0::2] = torch.sin(position * rates)
        table[:, 1::2] = torch.cos(position * rates)
        self.table = table.to(dtype)

    def forward(self, x):
        seq_len = x.size(1)
        self._ensure_cache(seq_len, x.device, x.dtype)
        return x + self.table[:seq_len]
