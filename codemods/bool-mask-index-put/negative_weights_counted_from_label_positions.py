"""A loss that weighs each example by how many of its positions carry a label. The weights are
written through a boolean mask, but everything they are computed from is boolean or integer (the
positions with a label, their count per row, a fresh `zeros_like`), so nothing in the write can
require grad, and the backward never reaches it. Measured under torch 2.15 (`aot_eager`, a training
step): the masked reads break the graph (TCF106), and every frame compiles (6 of 6); with a learned
scale in the values (positive_weights_scaled_by_a_learned_temperature.py) the frame holding the write
falls back to eager.
The helper's parameter is known to be boolean or integer because the helper indexes with it.
tcfix: nothing."""
import torch
from torch import nn


class CountWeightedLoss(nn.Module):
    def __init__(self, dim: int = 8, vocab: int = 16, ignore: int = -100):
        super().__init__()
        self.proj = nn.Linear(dim, vocab)
        self.ignore = ignore

    def row_weights(self, labelled: torch.Tensor) -> torch.Tensor:
        per_row = labelled.sum(dim=1).to(dtype=torch.float32)
        weights = torch.zeros_like(per_row)
        has_any = per_row > 0
        weights[has_any] = 1.0 / torch.sqrt(per_row[has_any])
        return weights[:, None].expand_as(labelled)[labelled]

    def forward(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = self.proj(hidden)
        labelled = targets != self.ignore
        losses = nn.functional.cross_entropy(logits[labelled], targets[labelled], reduction="none")
        return (losses * self.row_weights(labelled)).sum()
