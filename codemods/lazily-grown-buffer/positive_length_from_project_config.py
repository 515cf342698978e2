"""TCF201 positive: the table's module knows no maximum length, but the project's config class
gives one a default (`DecoderConfig.max_seq_len: int = 64`): the decoder of the post-mortem that
started tcfix.

tcfix should call `self._ensure_cache(64, self.table.device, self.table.dtype)` at the end of
`__init__`, Unsafe, and say why: the module does not know the length, so a model built with a
longer one, or longer inputs, still grow the table and recompile (earlier positions' values are
unchanged).
"""
import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class DecoderConfig:
    dim: int = 16
    max_seq_len: int = 64


class SinusoidalPositions(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.register_buffer("table", torch.empty(0, dim), persistent=False)

    def _ensure_cache(self, seq_len, device, dtype):
        if self.table.size(0) >= seq_len:
            return
        position = torch.arange(seq_len, device=device, dtype=torch.float32).unsqueeze(1)
        rates = torch.exp(torch.arange(0, self.dim, 2, device=device) * (-math.log(10000.0) / self.dim))
        self.table = torch.cat([torch.sin(position * rates), torch.cos(position * rates)], dim=-1).to(dtype)

    def forward(self, x):
        self._ensure_cache(x.size(1), x.device, x.dtype)
        return x + self.table[: x.size(1)]


class Decoder(nn.Module):
    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.positions = SinusoidalPositions(cfg.dim)
        self.proj = nn.Linear(cfg.dim, cfg.dim)

    def forward(self, x):
        return self.proj(self.positions(x))
