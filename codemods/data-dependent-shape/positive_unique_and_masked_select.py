"""`torch.unique`, `.unique()`, `masked_select`, `argwhere`, `x[:, mask]`."""
import torch
from torch import nn


class SegmentPool(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, segment_ids: torch.Tensor) -> torch.Tensor:
        segments = torch.unique(segment_ids)
        count = segment_ids.unique(sorted=True).numel()
        h = self.proj(x)
        positive = torch.masked_select(h, h > 0)
        rows = (h.sum(-1) > 0).argwhere()
        keep = h.mean(0) > 0
        return h[:, keep].sum() + positive.sum() + rows.numel() + segments.numel() + count
