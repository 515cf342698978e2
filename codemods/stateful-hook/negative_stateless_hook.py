"""TCF202 negative: a stateless forward hook — it uses only its arguments and torch (clamps the
block's output). Dynamo has nothing outside the hook to guard on.

tcfix should report nothing for TCF202.
"""
import torch
from torch import nn


def clamp_output(module: nn.Module, inputs, output: torch.Tensor) -> torch.Tensor:
    return torch.clamp(output, min=-50.0, max=50.0)


class Encoder(nn.Module):
    def __init__(self, dim: int = 64, depth: int = 3):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        for layer in self.layers:
            layer.register_forward_hook(clamp_output)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x
