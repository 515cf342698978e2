"""Names a comprehension binds hide the function's: `keep` is a mask in forward, but inside the
comprehension it is an int from `range`, so `x[~keep]` is integer indexing there."""
import torch
from torch import nn


class Shadowing(nn.Module):
    def forward(self, x: torch.Tensor):
        keep = x > 0
        return [x[~keep] for keep in range(2)], keep.sum()
