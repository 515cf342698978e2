"""CRLF line endings survive the fix."""
import torch
from torch import nn


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gain.item()  # learned gain
