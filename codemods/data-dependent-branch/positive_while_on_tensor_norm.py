"""A `while` whose test is tensor data: the loop itself breaks, Critical."""
import torch
from torch import nn


class Renormalize(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        while x.norm() > 10.0:
            x = x / 2
        return x
