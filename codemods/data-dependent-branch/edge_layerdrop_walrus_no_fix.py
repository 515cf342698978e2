"""A LayerDrop test that binds the draw with `:=` and uses it after: the guard that turns LayerDrop
off under compile would skip the binding, leaving `p` unbound, so there is no fix."""
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.layerdrop = 0.1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            if self.training and (p := torch.rand([])) < self.layerdrop:
                continue
            x = layer(x) * (1 - p)
        return x
