"""Lists built from `range` of an input size: one Python number per index pins the size."""
import torch
from torch import nn


class Positions(nn.Module):
    def forward(self, x, ids):
        B, T = ids.shape
        # Safe: the dtype is given, so even an empty range builds the same tensor.
        positions = torch.tensor(list(range(T)), dtype=torch.long, device=x.device)
        # Unsafe: an empty range would give float32 here, int64 with `torch.arange`.
        offsets = torch.as_tensor(range(1, T + 1, 2))
        # No fix: the list stays a Python list.
        order = tuple(range(x.size(0)))
        return x[list(order)] + positions.sum() + offsets.sum()


class Pinned(nn.Module):
    def forward(self, x):
        # No fix: `torch.arange` has no `pin_memory`.
        return x + torch.tensor(list(range(x.shape[0])), pin_memory=False)[:, None]
