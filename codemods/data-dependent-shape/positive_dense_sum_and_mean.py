"""Selections that only feed a sum or a mean: the dense form through `torch.where` where tcfix can write
it — a `masked_select` sum (it broadcasts like `torch.where`), a sum or mean through a mask computed
from the tensor itself — and the setting where the mask's shape is unknown (`x[m].sum()` with `m` an
input: it may select rows)."""
import torch
from torch import nn


class Losses(nn.Module):
    def forward(self, x: torch.Tensor, losses: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        kept = losses.masked_select(mask.unsqueeze(-1)).sum()
        positive = torch.sum(x[x > 0])
        finite = x[~torch.isnan(x)].mean()
        rows = x[mask.bool()].sum()
        return kept + positive + finite + rows
