"""A comment inside the `if`: the rewrite would drop it, so no fix; and a branch reading a name the
other branch assigns."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        if torch.isinf(h).any():
            # fp16 overflow
            h = h.clamp(-1e4, 1e4)
        g = h * 1
        if g.max() > 0:
            g = g * 2
            h = g + 1
        return h + g


class TwoNames(nn.Module):
    """The test reads `h`, which the first `torch.where` line would reassign: no fix."""

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if h.max() > 0:
            h = h * 2
            g = h * 0.5
        else:
            h = -h
            g = h * 0.25
        return h + g
