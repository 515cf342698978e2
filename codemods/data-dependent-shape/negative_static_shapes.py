"""Selections whose shape does not depend on values: integer-index gathers, `torch.where(c, a, b)`,
`masked_fill`, `nonzero_static`, a mask store with a scalar, `x[mask]` on a value not known to be a
tensor, and a boolean *list* or Python bool index."""
import torch
from torch import nn


class Dense(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, index: torch.Tensor, batch) -> torch.Tensor:
        h = self.proj(x)
        mask = h > 0
        picked = h[index]
        last = h[:, -1]
        dense = torch.where(mask, h, torch.zeros_like(h))
        filled = h.masked_fill(~mask, 0.0)
        first = torch.nonzero_static(mask.flatten(), size=4)
        h[mask] = 0.0
        flags = [True, False]
        items = batch[flags]
        return picked.sum() + last.sum() + dense + filled + first.sum() + items
