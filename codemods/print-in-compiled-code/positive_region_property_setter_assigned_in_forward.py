# forward assigns a property: the assignment runs the property's setter, and the setter's print
# breaks the graph. The getter is read too, and stays quiet.
# tcfix: TCF101 on the setter's print.
import torch
from torch import nn


class Tracker(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self._calls = 0

    @property
    def calls(self) -> int:
        return self._calls

    @calls.setter
    def calls(self, value: int) -> None:
        print("calls:", value)
        self._calls = value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls = self.calls + 1
        return self.proj(x)
