"""Selections tcfix reports without a `torch.where` fix: the selected values must have
the buffer's shape whichever way the test goes. `self.scale` is set from a constructor argument
(tcfix cannot tell it is a tensor, nor its shape); `self.inv_freq * weights` multiplies the buffer
by a full tensor, which may broadcast it to another shape than the `else` branch's."""
import torch
from torch import nn


class Rotary(nn.Module):
    def __init__(self, scale, dim: int = 16):
        super().__init__()
        self.scale = scale
        self.register_buffer("inv_freq", torch.ones(dim // 2))

    def forward(self, position_ids, weights):
        max_seq = position_ids.max() + 1
        if max_seq > 8:
            scale = self.scale / (max_seq / 8)
        else:
            scale = self.scale
        if max_seq > 8:
            inv_freq = self.inv_freq * weights
        else:
            inv_freq = self.inv_freq
        return position_ids[..., None].float() * inv_freq * scale
