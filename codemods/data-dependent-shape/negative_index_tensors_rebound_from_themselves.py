"""Integer index tensors rebound from themselves (`position_ids = position_ids.unsqueeze(0)`, the
rotary-embedding lookup): a gather, whose size is the index's, not a selection by a mask. Keeping
a name a mask through `unsqueeze`/`flatten` needs a binding that makes it one first."""
import torch
from torch import nn


class RotaryLookup(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cos_cached", torch.ones(16, 4))

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor, idx: torch.Tensor):
        position_ids = position_ids.unsqueeze(0)
        idx = idx.flatten()
        return x * self.cos_cached[position_ids] + x[idx]
