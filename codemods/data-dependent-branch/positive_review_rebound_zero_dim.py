"""A 0-d tensor built in steps, as loss-scaling and clipping code writes it: `scale = x.abs().max()`,
then `scale = scale * 2 + 1` on the next line, then `if scale > self.ceiling:`. The name is bound
twice, and both values are 0-d (a reduction without `dim`, then arithmetic with Python numbers), so
the test is a 0-d boolean tensor and torch.where can pick between the two values. A name rebound to
a value that is no longer 0-d (`spread = spread + x`, broadcast to `x`'s shape) loses its rank: that
branch keeps no fix.
tcfix: TCF104 twice; the first fixed with torch.where, the second not."""
import torch
from torch import nn


class StepScaler(nn.Module):
    def __init__(self, ceiling: float = 8.0):
        super().__init__()
        self.ceiling = ceiling

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = x.abs().max()
        scale = scale * 2 + 1
        if scale > self.ceiling:
            x = x.clamp(max=self.ceiling)
        spread = x.std()
        spread = spread + x
        if spread > 1:
            x = x - 1
        return x


class PeakOffset(nn.Module):
    """A 0-d name also passed where a tensor is expected (`torch.ones_like(peak)`) keeps its rank:
    a use says nothing of the shape. The test is 0-d and gets the `torch.where` fix."""

    def forward(self, x):
        peak = x.max() + 1
        if peak > 4:
            offset = peak * 2
        else:
            offset = peak
        return x + offset * torch.ones_like(peak)
