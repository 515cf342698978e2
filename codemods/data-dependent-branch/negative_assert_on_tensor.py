"""`assert` on tensor data is traced (`_assert_async`), with or without `and`: no finding."""
import torch
from torch import nn


class Checked(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert (x > -1e4).all() and torch.isfinite(x).all(), "input out of range"
        out = self.fc(x)
        assert out.abs().max() < 1e6
        return out
