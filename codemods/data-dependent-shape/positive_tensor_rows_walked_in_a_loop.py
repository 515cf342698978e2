"""A tensor walked in a `for` loop yields tensors: the multimodal position-index helpers walk the
batch with `for i, ids in enumerate(input_ids)` and keep each row's real tokens with a boolean mask
(a data-dependent shape, and in a loop: the whole frame runs eagerly); expert dispatch walks
`nonzero()` rows and compares each with a Python int. A `range` or a module list walked the same way
gives ints and modules, not tensors.
tcfix: TCF106 on the mask read, TCF104 on the test of a row, nothing on the range or the layers."""
import torch
from torch import nn


class PositionIndex(nn.Module):
    def __init__(self, dim: int = 8, depth: int = 2):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.sentinel = 3

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, hidden: torch.Tensor):
        lengths = []
        for i, ids in enumerate(input_ids):
            kept = ids[attention_mask[i].bool()]
            lengths.append(kept.shape[0])
        for hit in torch.nonzero(attention_mask):
            if hit[0] == self.sentinel:
                continue
        for step in range(2):
            if step == 1:
                hidden = hidden * 2
        for layer in self.layers:
            hidden = layer(hidden)
        return hidden, lengths
