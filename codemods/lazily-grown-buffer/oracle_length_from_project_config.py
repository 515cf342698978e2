"""Oracle fixture for lazily-grown-buffer (TCF201): the length is the project config's default.

The table module knows no maximum length; only the model's config class does
(`TaggerConfig.max_seq_len: int = 64`, the shape of the decoder in the post-mortem that started
tcfix). tcfix calls `self._ensure_cache(64, self.table.device, self.table.dtype)` at the end of
`__init__`, Unsafe: a model built with a longer `max_seq_len`, or longer inputs, still grow the
table and recompile (the values for earlier positions are unchanged).
"""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class TaggerConfig:
    vocab_size: int = 100
    dim: int = 16
    tags: int = 5
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
        rates = torch.exp(torch.arange(0, self.dim, 2, device=device, dtype=torch.float32) * (-math.log(10000.0) / self.dim))
        table = torch.zeros(seq_len, self.dim, device=device)
        table[:, 0::2] = torch.sin(position * rates)
        table[:, 1::2] = torch.cos(position * rates)
        self.table = table.to(dtype)

    def forward(self, x):
        seq_len = x.size(1)
        self._ensure_cache(seq_len, x.device, x.dtype)
        return x + self.table[:seq_len]


class Tagger(nn.Module):
    def __init__(self, cfg: TaggerConfig = TaggerConfig()):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.positions = SinusoidalPositions(cfg.dim)
        self.mix = nn.Linear(cfg.dim, cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.tags)

    def forward(self, tokens):
        x = self.positions(self.embed(tokens))
        return self.head(F.gelu(self.mix(x)))


def oracle_cases():
    # Growing lengths, as in a length-bucketed loader warming up; all within max_len.
    batches = [(torch.randint(0, 100, (2, length)),) for length in (8, 16, 24, 40, 12)]
    # The first new length legitimately recompiles once (time becomes dynamic); the recompiles
    # whose failed guard is about the table are the hazard.
    expect = {
        r"recompiles matching _buffers\['table'\]": (">=1", 0),
        "recompiles": (">=2", "<=1"),
    }
    return [
        {"name": "inference", "factory": lambda: Tagger().eval(), "inputs": batches, "unsafe_fixes": True, "expect": expect},
        {"name": "training", "factory": Tagger, "inputs": batches, "train": True, "atol": 1e-5, "unsafe_fixes": True, "expect": expect},
    ]
