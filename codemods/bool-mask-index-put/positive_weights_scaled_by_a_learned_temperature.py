"""The counterpart of negative_weights_counted_from_label_positions.py: the same per-row weights,
but scaled by a learned parameter before the masked write, so the values require grad in training
and the frame holding the write falls back to eager (measured under torch 2.15, `aot_eager`, a
training step: 1 of 2 frames compiles, "Error detected in IndexPutBackward0").
tcfix: TCF105 on the masked write."""
import torch
from torch import nn


class LearnedCountWeights(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, 1)
        self.temperature = nn.Parameter(torch.ones(()))

    def forward(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        labelled = targets >= 0
        per_row = labelled.sum(dim=1).to(dtype=torch.float32)
        weights = torch.zeros_like(per_row)
        has_any = per_row > 0
        weights[has_any] = self.temperature / torch.sqrt(per_row[has_any])
        return (self.proj(hidden).squeeze(-1).sum(-1) * weights).sum()
