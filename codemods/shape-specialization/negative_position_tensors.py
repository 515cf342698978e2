"""Positions passed as tensors, as current decoders do (`cache_position`, `position_ids`,
`input_pos` typed as tensors): indexing with a tensor of positions is traced as tensor data, not
as a Python int compiled into the graph. A length compared against 1 inside an eager `generate`
loop is not compiled either."""
from typing import Optional

import torch
from torch import nn


class TensorPositions(nn.Module):
    def __init__(self, dim: int, max_len: int):
        super().__init__()
        self.register_buffer("cos", torch.randn(max_len, dim))
        self.register_buffer("cache", torch.zeros(1, max_len, dim))

    def forward(self, x, input_pos: Optional[torch.Tensor] = None, position_ids: torch.Tensor = None):
        cos = self.cos[position_ids]
        self.cache[:, input_pos] = x
        return x * cos


class Generator:
    def __init__(self, model):
        self.model = torch.compile(model)

    def generate(self, prompt, steps: int):
        seq_len = prompt.shape[1]
        out = prompt
        for start_pos in range(seq_len, seq_len + steps):
            if seq_len > 1:
                out = self.model(out[:, start_pos - 1 : start_pos])
        return out
