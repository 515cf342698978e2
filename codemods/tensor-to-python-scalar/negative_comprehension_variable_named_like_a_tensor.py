"""A comprehension's own variable has the name of a tensor of the function: `int(sizes)` converts
each Python int of `widths` (a comprehension is its own scope), not the tensor."""
import torch
from torch import nn


class Widths(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, widths: tuple[int, ...] = (2, 3, 3)):
        sizes = self.proj(x).sum(0)
        counts = [int(sizes) for sizes in widths]
        return x.split(counts, dim=-1), sizes
