"""An `.item()` inside the loop over blocks: Dynamo gives up on the whole forward."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Encoder(nn.Module):
    def __init__(self, dim: int = 16, depth: int = 3):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.gates = nn.Parameter(torch.ones(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, block in enumerate(self.blocks):
            x = x + block(x) * self.gates[i].item()
        return x
