# A property whose setter logs: forward only reads the property, which runs the getter. The
# setter runs where the attribute is assigned (here, in eager set-up code), not under compile.
# tcfix: no TCF101 finding.
import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self._scale = 1.0

    @property
    def scale(self) -> float:
        return self._scale

    @scale.setter
    def scale(self, value: float) -> None:
        print(f"scale changed from {self._scale} to {value}")
        self._scale = value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x) * self.scale


def build(dim: int) -> Scaled:
    model = Scaled(dim)
    model.scale = 0.5
    return torch.compile(model)
