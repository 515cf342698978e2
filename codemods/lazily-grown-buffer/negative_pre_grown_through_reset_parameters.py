"""TCF201 negative: `__init__` pre-grows the table indirectly — it calls `self.reset_parameters()`,
which rebuilds `pe` at `self.max_len` through `_extend_pe`. In-range inputs never grow it under
compile.

tcfix should report nothing for TCF201 (and must not add a redundant `self._extend_pe(max_len)`).
"""
import math

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int = 1024):
        super().__init__()
        self.d_model = d_model
        self.max_len = max_len
        self.register_buffer("pe", torch.empty(0, d_model), persistent=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.pe = torch.empty(0, self.d_model, device=self.pe.device)
        self._extend_pe(self.max_len)

    def _extend_pe(self, length: int) -> None:
        if self.pe.size(0) >= length:
            return
        position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, self.d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / self.d_model))
        pe = torch.zeros(length, self.d_model, device=self.pe.device)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.pe = pe

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._extend_pe(x.size(1))
        return x + self.pe[: x.size(1)]
