"""A forward that reshapes a flat input before asserting its rank: the branch runs on every flat
input and the assert then holds, so the print in it breaks the graph on a working call. Found."""
import torch
from torch import nn


class Projector(nn.Module):
    def __init__(self, width: int = 8):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        if x.dim() != 3:
            print("adding the sequence dimension")
            x = x.unsqueeze(1)
        assert x.dim() == 3
        return self.proj(x)
