"""Names that were masks earlier but are not where the write reads them: rebound to integer indices
right before the write, or rebound to a mask only on one branch of an `if` (the write after it may
see either binding). An integer index has a dense backward: nothing to report."""
import torch
from torch import nn


class Scatter(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.filler = nn.Parameter(torch.randn(dim))

    def rows_as_indices(self, frames: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        keep = scores > 0
        keep = keep.int()
        frames[keep] = self.filler
        return frames

    def mask_on_one_branch(self, frames: torch.Tensor, spans: torch.Tensor, as_mask: bool) -> torch.Tensor:
        spans = spans.long()
        if as_mask:
            spans = spans > 0
        frames[spans] = self.filler
        return frames

    def forward(self, frames: torch.Tensor, scores: torch.Tensor, as_mask: bool = False) -> torch.Tensor:
        return self.rows_as_indices(frames * 2, scores) + self.mask_on_one_branch(frames * 2, scores, as_mask)
