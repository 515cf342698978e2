"""TCF201 positive: the maximum length comes from an HF-style config passed to `__init__`
(`config.max_position_embeddings`); it is copied to `self` only under a name tcfix does not know.

tcfix should report the growth in `_extend_position_table` and offer a Safe fix calling
`self._extend_position_table(config.max_position_embeddings)` at the end of `__init__`.
"""
import math

import torch
from torch import nn


class SinusoidalPositionEmbedding(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.max_source_positions = config.max_position_embeddings
        self.register_buffer("weights", torch.empty(0, config.hidden_size), persistent=False)

    def _extend_position_table(self, num_positions: int) -> None:
        if num_positions <= self.weights.size(0):
            return
        half_dim = self.hidden_size // 2
        freq = torch.exp(torch.arange(half_dim, dtype=torch.float32) * -(math.log(10000.0) / (half_dim - 1)))
        angles = torch.arange(num_positions, dtype=torch.float32).unsqueeze(1) * freq.unsqueeze(0)
        table = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
        self.weights = table.to(self.weights.device)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        seq_len = input_ids.shape[1]
        self._extend_position_table(seq_len)
        return self.weights[:seq_len].unsqueeze(0).expand(input_ids.shape[0], -1, -1)
