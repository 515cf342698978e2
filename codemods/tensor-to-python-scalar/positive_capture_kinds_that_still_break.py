"""Conversions that `capture_scalar_outputs` does not make traceable (measured, torch 2.15): a branch on
the value, `range()` of it, indexing a Python list with it, `itertools.groupby` over a `.tolist()`, a
reshape of a split piece that infers a size next to it. Each is reported with no fix and the reason;
the split sizes alone get the setting."""
import itertools

import torch
from torch import nn


class Merger(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.names = ["image", "video"]

    def forward(self, x: torch.Tensor, grid_thw: torch.Tensor, token_type: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        if torch.isnan(h).any().item():
            h = h.nan_to_num()
        steps = int(grid_thw.max().item())
        for step in range(steps):
            h = h * 0.5
        kind = self.names[token_type.argmax().item()]
        groups = [key for key, _ in itertools.groupby(token_type.tolist())]
        pieces = torch.split(h, (grid_thw.prod(-1) // 4).tolist())
        images = [piece.view(1, height, width, -1) for piece, (_, height, width) in zip(pieces, grid_thw.tolist())]
        return len(kind) + len(groups) + torch.stack([image.mean() for image in images]).sum()
