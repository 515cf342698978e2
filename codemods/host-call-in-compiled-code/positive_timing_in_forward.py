"""TCF107 positive: a transformer block times its attention with `time.perf_counter()` inside
`forward`. Each clock read is a graph break (GB9193) under torch.compile."""
import time

import torch
from torch import nn


class TimedBlock(nn.Module):
    def __init__(self, dim: int = 64, heads: int = 4):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.last_attention_seconds = 0.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        start = time.perf_counter()
        attended, _ = self.attn(x, x, x, need_weights=False)
        self.last_attention_seconds = time.perf_counter() - start
        x = x + attended
        return x + self.mlp(x)
