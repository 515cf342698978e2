"""TCF201 negative: the table is registered empty, but `__init__` already grows it to the maximum
length with the buffer's own device and dtype, so forward's `_ensure_cache` never grows it for
in-range inputs.

tcfix should report nothing.
"""
import torch
from torch import nn


class RotaryCache(nn.Module):
    def __init__(self, dim: int, max_position_embeddings: int = 2048):
        super().__init__()
        self.dim = dim
        self.register_buffer("cos", torch.empty(0, dim), persistent=False)
        self._ensure_cache(max_position_embeddings, self.cos.device, self.cos.dtype)

    def _ensure_cache(self, seq_len, device, dtype):
        if self.cos.size(0) >= seq_len:
            return
        t = torch.arange(seq_len, device=device, dtype=torch.float32)
        self.cos = torch.outer(t, torch.ones(self.dim, device=device)).cos().to(dtype)

    def forward(self, x):
        self._ensure_cache(x.size(1), x.device, x.dtype)
        return x * self.cos[: x.size(1)]
