"""A ternary on a 0-d tensor between two numbers, whose result a later test reads as a Python
number: `torch.where` would make it a tensor and that test a new graph break, so there is no fix."""
import torch
from torch import nn


class Scaled(nn.Module):
    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        seq_len = torch.max(position_ids) + 1
        scale = 1.25 if seq_len > 8 else 1.0
        if scale > 1.0:
            x = x.clamp(-1, 1)
        return x * scale
