"""TCF201 edge: three lazily grown tables in one file — two non-persistent (Safe fixes) and one
persistent (Unsafe fix).

tcfix should report all three; `--apply` should write the two Safe calls, `--apply --unsafe-fixes` all
three, each at the end of its own `__init__`, and a second run should change nothing.
"""
import math

import torch
from torch import nn


def sinusoid_table(length: int, dim: int) -> torch.Tensor:
    position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(position * div_term)
    table[:, 1::2] = torch.cos(position * div_term)
    return table


class EncoderPositions(nn.Module):
    def __init__(self, dim: int, max_len: int = 1024):
        super().__init__()
        self.dim = dim
        self.register_buffer("pe", torch.empty(0, dim), persistent=False)

    def _extend(self, length: int) -> None:
        if self.pe.size(0) < length:
            self.pe = sinusoid_table(length, self.dim).to(self.pe.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._extend(x.size(1))
        return x + self.pe[: x.size(1)]


class DecoderPositions(nn.Module):
    def __init__(self, dim: int, max_seq_len: int = 512):
        super().__init__()
        self.dim = dim
        self.register_buffer("pe", torch.empty(0, dim), persistent=False)

    def _extend(self, length: int) -> None:
        if self.pe.size(0) < length:
            self.pe = sinusoid_table(length, self.dim).to(self.pe.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._extend(x.size(1))
        return x + self.pe[: x.size(1)]


class CausalMask(nn.Module):
    def __init__(self, block_size: int = 512):
        super().__init__()
        self.register_buffer("mask", torch.zeros((0, 0), dtype=torch.bool))

    def _extend(self, length: int) -> None:
        if self.mask.size(0) < length:
            self.mask = torch.ones(length, length, dtype=torch.bool, device=self.mask.device).tril()

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        t = scores.size(-1)
        self._extend(t)
        return scores.masked_fill(~self.mask[:t, :t], float("-inf"))
