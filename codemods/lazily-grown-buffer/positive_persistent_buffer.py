"""TCF201 positive: the same lazily grown position table, but the buffer is persistent (the default).

Growing it at construction changes the size of `pe` in `state_dict`, so checkpoints saved before the
fix (with a shorter or empty `pe`) no longer load strictly. tcfix should report the reassignment and
offer `self._extend_pe(max_len)` at the end of `__init__` only as an Unsafe fix (`--unsafe-fixes`).
"""
import math

import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int = 2048):
        super().__init__()
        self.d_model = d_model
        self.register_buffer("pe", torch.empty(0, d_model))

    def _extend_pe(self, length: int) -> None:
        if self.pe.size(0) >= length:
            return
        position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
        div_term = torch.exp(
            torch.arange(0, self.d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / self.d_model)
        )
        pe = torch.zeros(length, self.d_model, device=self.pe.device)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.pe = pe

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._extend_pe(x.size(1))
        return x + self.pe[: x.size(1)]
