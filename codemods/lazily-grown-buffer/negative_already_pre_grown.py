"""TCF201 negative: the table is registered empty and grown by `_extend_pe`, but `__init__` already
calls `self._extend_pe(max_len)` as its last line (what tcfix's fix writes). In-range inputs never grow
it under compile.

tcfix should report nothing for TCF201 (and applying fixes must not add a second call).
"""
import math

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int = 1024):
        super().__init__()
        self.d_model = d_model
        self.register_buffer("pe", torch.empty(0, d_model), persistent=False)
        self._extend_pe(max_len)

    def _extend_pe(self, length: int) -> None:
        if self.pe.size(0) >= length:
            return
        position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
        div_term = torch.exp(
            torch.arange(0, self.d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / self.d_model)
        )
        pe = torch.zeros(length, self.d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.pe = pe.to(self.pe.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.size(1) > self.pe.size(0):
            self._extend_pe(x.size(1))
        return x + self.pe[: x.size(1)]
