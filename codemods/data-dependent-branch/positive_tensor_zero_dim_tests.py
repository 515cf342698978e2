"""0-d tensors built from a reduction: `peak = x.amax() + 1` then `if peak > self.limit:`, and a flag
`saturated = x.abs().sum() > budget` tested later. A reduction without `dim`, arithmetic with
Python numbers and a comparison with a Python number or attribute all stay 0-d, so the test is a
0-d boolean tensor and torch.where can pick between the two values. A reduction that keeps a dim
(`amax(dim=-1, keepdim=True)`) is not 0-d: that branch keeps no fix.
tcfix: TCF104 three times; the first two fixed with torch.where, the third not."""
import torch
from torch import nn


class SoftLimiter(nn.Module):
    def __init__(self, limit: float = 6.0, budget: float = 100.0):
        super().__init__()
        self.limit = limit
        self.budget = budget

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        peak = x.amax() + 1
        if peak > self.limit:
            x = x.clamp(max=self.limit)
        saturated = x.abs().sum() > self.budget
        if saturated:
            x = x * 0.5
        row_peak = x.amax(dim=-1, keepdim=True)
        if row_peak > 0:
            x = x - 1.0
        return x
