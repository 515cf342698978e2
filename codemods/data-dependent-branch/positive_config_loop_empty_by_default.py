"""Loops over `range(...)` up to a config field: with the default config (`extra_rounds = 1`,
`refinements = 0`) `range(1, self.extra_rounds)` and `range(self.refinements)` are empty, so
their bodies are never traced. A tensor branch there stays, low, and says which config makes the
loop run. A loop the default runs (`range(self.depth)`, 2) keeps its critical finding."""
import torch
from torch import nn


class MergerConfig:
    extra_rounds: int = 1
    refinements: int = 0
    depth: int = 2


class Merger(nn.Module):
    def __init__(self, config: MergerConfig):
        super().__init__()
        self.extra_rounds = config.extra_rounds
        self.refinements = config.refinements
        self.depth = config.depth
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(1, self.extra_rounds):
            if x.sum() > 0:
                x = self.proj(x)
        for _ in range(self.refinements):
            if x.mean() > 0:
                x = x * 2
        for _ in range(self.depth):
            if x.max() > 0:
                x = self.proj(x)
        return x
