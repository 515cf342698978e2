"""A flag `__init__` sets False and turns on only when the config asks for a local window: the
default config leaves `window` unset, so the loop that bands the mask row by row is never traced.
A config that sets `window` runs it, and then every new sequence length recompiles: the finding
stays, low, and says when it is real."""
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class TinyConfig:
    width: int = 16
    window: int | None = None
    local_layers: tuple[int, ...] | None = None


class LocalAttention(nn.Module):
    def __init__(self, config: TinyConfig, layer: int):
        super().__init__()
        self.config = config
        self.qkv = nn.Linear(config.width, 3 * config.width)
        self.banded = False
        if config.window is not None and config.local_layers is not None:
            self.banded = layer in config.local_layers

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-1, -2)
        if self.banded:
            band = torch.full((length, length), float("-inf"))
            for row in range(length):
                band[row, max(0, row - self.config.window + 1) : row + 1] = 0.0
            scores = scores + band
        return scores.softmax(-1) @ v
