"""`t[mask] = src[mask]` (VITS spline pattern): an elementwise mask, no fix; a second write in a
helper function."""
import torch
from torch import nn


def spline(inputs: torch.Tensor, tail_bound: float = 5.0) -> torch.Tensor:
    outside = (inputs < -tail_bound) | (inputs > tail_bound)
    outputs = torch.zeros_like(inputs)
    outputs[outside] = inputs[outside]
    return outputs


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return spline(self.proj(x))
