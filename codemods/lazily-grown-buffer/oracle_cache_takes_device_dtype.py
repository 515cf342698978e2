"""Oracle fixture for lazily-grown-buffer (TCF201): a growth routine that takes the device and dtype.

A small token tagger whose sinusoidal table starts empty and is grown by
`_ensure_cache(seq_len, device, dtype)`, called from forward with the input's length, device and
dtype (the older Hugging Face rotary `_set_cos_sin_cache` layout). Dynamo treats the buffer as
static and guards on its size: every longer batch recompiles. tcfix calls
`self._ensure_cache(max_len, self.table.device, self.table.dtype)` at the end of `__init__`: the
empty buffer's own device and dtype, so the table is built as the empty one was typed and moves
and casts with the model afterwards (Safe).
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


class SinusoidalPositions(nn.Module):
    def __init__(self, dim: int, max_len: int = 64):
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
    def __init__(self, vocab_size: int = 100, dim: int = 16, tags: int = 5):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.positions = SinusoidalPositions(dim)
        self.mix = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, tags)

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
        {"name": "inference", "factory": lambda: Tagger().eval(), "inputs": batches, "expect": expect},
        {"name": "training", "factory": Tagger, "inputs": batches, "train": True, "atol": 1e-5, "expect": expect},
    ]
