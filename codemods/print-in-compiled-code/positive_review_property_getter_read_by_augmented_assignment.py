# A step counter kept behind a property: `self.steps += 1` in forward first reads the property
# through its getter, then writes it through its setter. The getter logs, so the print runs
# under compile and breaks the graph; it is as reached as the setter.
# tcfix: TCF101 on the print in the `steps` getter.
import torch
from torch import nn


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self._steps = 0

    @property
    def steps(self) -> int:
        print("steps read:", self._steps)
        return self._steps

    @steps.setter
    def steps(self, value: int) -> None:
        self._steps = value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.steps += 1
        return x * 2
