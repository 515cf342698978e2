"""TCF201 positive: sinusoidal position table registered empty (non-persistent) and grown on demand.

`pe` starts as `torch.empty(0, d_model)` and `forward` calls `self._extend_pe(n)` when the input is
longer than the table; `__init__` receives `max_len`. tcfix should report the reassignment in
`_extend_pe` and offer a Safe fix: `self._extend_pe(max_len)` as the last line of `__init__`.
"""
import math

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000):
        super().__init__()
        self.d_model = d_model
        self.dropout = nn.Dropout(p=dropout)
        self.register_buffer("pe", torch.empty(0, d_model), persistent=False)

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
        # x: (batch, seq_len, d_model)
        self._extend_pe(x.size(1))
        return self.dropout(x + self.pe[: x.size(1)])
