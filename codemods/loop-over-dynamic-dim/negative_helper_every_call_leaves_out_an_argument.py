"""A helper whose only call in compiled code leaves out arguments it requires: `Tiler.forward`
calls `self.tiled(x, scale)` but `tiled` also needs `tile` and `step`, so the call raises
`TypeError` before Dynamo traces a line of it, and its loop over a size is never unrolled (torch
2.15: built with `mode="tiled"`, the compiled call raises the same TypeError as the eager one)."""
import torch
from torch import nn


class Tiler(nn.Module):
    def __init__(self, dim, mode="whole"):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.mode = mode

    def tiled(self, x, scale, tile, step):
        out = torch.zeros_like(x)
        for start in range(0, x.shape[1], step):
            out[:, start : start + tile] = self.proj(x[:, start : start + tile]) * scale
        return out

    def forward(self, x, scale=1.0):
        if self.mode == "tiled":
            return self.tiled(x, scale)
        return self.proj(x) * scale
