"""TCF201 edge: `max_len` is an optional parameter (`None` means "use the default"); `__init__`
resolves it into `self.max_len` and leaves the parameter itself `None`.

tcfix should report the growth. A fix must pre-grow to the resolved `self.max_len`;
`self._extend_pe(max_len)` would pass `None` whenever the caller relies on the default
(`TypeError: '>=' not supported between 'int' and 'NoneType'` at construction).
"""
import math
from typing import Optional

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: Optional[int] = None):
        super().__init__()
        self.d_model = d_model
        self.max_len = max_len if max_len is not None else 4096
        self.register_buffer("pe", torch.empty(0, d_model), persistent=False)

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
