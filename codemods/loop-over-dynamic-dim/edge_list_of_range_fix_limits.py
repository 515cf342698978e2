"""Lists of a range whose `torch.arange` fix must keep the tensor and parse (torch 2.15)."""
import torch
from torch import nn


class Limits(nn.Module):
    def forward(self, x):
        n = x.shape[1]
        # A trailing comma in the range and parentheses around the data: the fix still parses.
        a = torch.tensor(list(range(n,)), dtype=torch.long)
        b = torch.tensor((list(range(n))), dtype=torch.long)
        # No fix: `arange(…).flip(0)` is not a leaf, so its `.grad` would stay None.
        c = torch.tensor(list(range(n))[::-1], dtype=torch.float32, requires_grad=True)
        # No fix: `torch.arange` has no bool or complex kernel.
        d = torch.tensor(list(range(n)), dtype=torch.bool)
        # Unsafe: `dtype=None` is no dtype, an empty range would give float32.
        e = torch.tensor(list(range(n)), dtype=None)
        return x + a.sum() + b.sum() + c.sum() + d.sum() + e.sum()


class Commented(nn.Module):
    def forward(self, x):
        positions = torch.tensor(  # one per position
            list(range(x.shape[1])),
            dtype=torch.long,
        )
        return x + positions
