"""Masked writes that compile: scalars, label and id tensors, boolean values, integer indices
(trimmed from transformers' CSM and Nemotron-H)."""
import torch
from torch import nn


class Labels(nn.Module):
    def __init__(self, dim: int = 8, codebooks: int = 2):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.codebooks = codebooks

    def forward(self, x: torch.Tensor, input_ids: torch.Tensor, labels: torch.Tensor, index: torch.Tensor):
        h = self.proj(x)
        pad = input_ids == 0
        h[pad] = 0.0
        h[index] = self.proj(x[index])
        labels_expanded = labels.unsqueeze(-1).repeat(1, 1, self.codebooks)
        labels_expanded[pad] = input_ids[pad].unsqueeze(-1).repeat(1, self.codebooks)
        retention_mask = torch.ones_like(input_ids, dtype=torch.bool)
        retention_mask[pad] = h.sum(-1)[pad] > 0
        return h, labels_expanded, retention_mask
