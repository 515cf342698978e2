"""TCF201 edge: the "growth" routine rebuilds the table at exactly the requested length on every
call (no `if self.pe.size(0) >= length: return`), and `forward` calls it unconditionally.

Calling `self._build_pe(max_len)` from `__init__` does not help: `forward` still replaces `pe` with a
table of the input's length, so every new length still fails the size guard. tcfix should report the
reassignment without a fix — and the hazard must still be reported after such a call is added to
`__init__`.
"""
import math

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int = 2048):
        super().__init__()
        self.d_model = d_model
        self.register_buffer("pe", torch.empty(0, d_model), persistent=False)

    def _build_pe(self, length: int) -> None:
        position = torch.arange(length, dtype=torch.float32, device=self.pe.device).unsqueeze(1)
        div_term = torch.exp(
            torch.arange(0, self.d_model, 2, dtype=torch.float32, device=self.pe.device) * (-math.log(10000.0) / self.d_model)
        )
        pe = torch.zeros(length, self.d_model, device=self.pe.device)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.pe = pe

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._build_pe(x.size(1))
        return x + self.pe
