"""Trimmed from transformers 5.23: loops whose count is fixed by the model, not by the input —
the rank (higgs `pad_to_block`), feature levels (grounding-dino), a weight's rows (csm)."""
import torch
from torch import nn


def pad_to_block(tensor, dims, had_block_size, value=0):
    pad_dims = [0 for _ in range(2 * len(tensor.shape))]
    return nn.functional.pad(tensor, pad_dims, "constant", value)


class Head(nn.Module):
    def __init__(self, dim, codebooks):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(codebooks, dim, dim))
        self.bbox = nn.Linear(dim, 4)

    def forward(self, hidden_states, codebook_indices):
        codebook_weight = self.weight[codebook_indices]
        outs = [hidden_states[:, i] @ codebook_weight[i].T for i in range(codebook_weight.shape[0])]
        num_levels = hidden_states.shape[1]
        boxes = [self.bbox(hidden_states[:, level]) for level in range(num_levels)]
        return pad_to_block(torch.stack(outs + boxes), [0], 4)
