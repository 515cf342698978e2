"""TCF201 positive: the table is grown by a method, but nothing in `__init__` says how long inputs
can get (no `max_len`, `block_size`, `max_position_embeddings`...).

tcfix should report the reassignment in `_extend_pe` without a fix: there is no length to pre-grow to.
"""
import math

import torch
from torch import nn


class RelativeSinusoidalEncoding(nn.Module):
    def __init__(self, d_model: int):
        super().__init__()
        self.d_model = d_model
        self.register_buffer("pe", torch.empty(0, d_model), persistent=False)

    def _extend_pe(self, length: int) -> None:
        if self.pe.size(0) >= 2 * length - 1:
            return
        positions = torch.arange(length - 1, -length, -1.0).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, self.d_model, 2).float() * -(math.log(10000.0) / self.d_model))
        pe = torch.zeros(2 * length - 1, self.d_model)
        pe[:, 0::2] = torch.sin(positions * div_term)
        pe[:, 1::2] = torch.cos(positions * div_term)
        self.pe = pe.to(self.pe.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = x.size(1)
        self._extend_pe(length)
        center = self.pe.size(0) // 2
        return self.pe[center - length + 1 : center + length]
