"""TCF201 edge: the growth routine takes the input tensor, not a length (ESPnet's `extend_pe(x)`
layout): `forward` calls `self.extend_pe(x)` and the routine reads `x.size(1)`.

tcfix should report the growth. A fix that calls `self.extend_pe(max_len)` would pass an int where a
tensor is expected and crash in `__init__` (`'int' object has no attribute 'size'`); the fix has to
be withheld (report only) unless the routine's argument is known to be a length.
"""
import math

import torch
from torch import nn


class ScaledPositionalEncoding(nn.Module):
    def __init__(self, d_model: int, dropout_rate: float = 0.1, max_len: int = 5000):
        super().__init__()
        self.d_model = d_model
        self.xscale = math.sqrt(d_model)
        self.alpha = nn.Parameter(torch.tensor(1.0))
        self.dropout = nn.Dropout(p=dropout_rate)
        self.register_buffer("pe", torch.empty(0, d_model), persistent=False)

    def extend_pe(self, x: torch.Tensor) -> None:
        if self.pe.size(0) >= x.size(1):
            return
        pe = torch.zeros(x.size(1), self.d_model)
        position = torch.arange(0, x.size(1), dtype=torch.float32).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, self.d_model, 2, dtype=torch.float32) * -(math.log(10000.0) / self.d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.pe = pe.to(device=x.device, dtype=x.dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.extend_pe(x)
        x = x + self.alpha * self.pe[: x.size(1)]
        return self.dropout(x)
