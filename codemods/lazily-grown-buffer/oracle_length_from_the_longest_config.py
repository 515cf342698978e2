"""Oracle fixture for lazily-grown-buffer (TCF201): the project's config classes disagree on the
length.

The table module knows no maximum length. Two config classes give `seq_len` a default: the
training run's (`RunSettingsConfig.seq_len = 64`) and a memory estimate's (`EstimateConfig.seq_len
= 256`), and no module says which one builds it. The table must cover every run the project
configures, so tcfix pre-grows it to the longest, 256, at the end of `__init__` (Unsafe: a run
with a longer length still grows it). The values for earlier positions are the same, so outputs
stay equal; only the input-length recompile is left.
"""
import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class RunSettingsConfig:
    batch_size: int = 8
    seq_len: int = 64


@dataclass
class EstimateConfig:
    batch_size: int = 32
    seq_len: int = 256


class GrowingPositionTable(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.dim = dim
        self.register_buffer("table", torch.empty((0, dim)), persistent=False)

    def _ensure_cache(self, seq_len, device, dtype):
        have = self.table.shape[0]
        if seq_len <= have:
            return
        position = torch.arange(have, seq_len, device=device, dtype=dtype).unsqueeze(1)
        rates = torch.exp(torch.arange(0, self.dim, 2, device=device, dtype=dtype) * (-math.log(10000.0) / self.dim))
        extra = torch.zeros((seq_len - have, self.dim), device=device, dtype=dtype)
        extra[:, 0::2] = torch.sin(position * rates)
        extra[:, 1::2] = torch.cos(position * rates)
        self.table = torch.cat((self.table, extra), dim=0)

    def forward(self, x):
        seq_len = x.shape[1]
        self._ensure_cache(seq_len, device=x.device, dtype=x.dtype)
        return x + self.table[:seq_len].unsqueeze(0)


def oracle_cases():
    batches = [(torch.randn(2, length, 16),) for length in (8, 8, 20, 20, 40)]
    expect = {
        r"recompiles matching _buffers\['table'\]": (">=1", 0),
        "graphs": (">=3", "<=2"),
    }
    return [
        {"name": "inference", "factory": GrowingPositionTable, "inputs": batches, "unsafe_fixes": True, "expect": expect},
    ]
