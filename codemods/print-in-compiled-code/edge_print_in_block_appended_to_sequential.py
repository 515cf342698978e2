import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        # Not critical: the blocks are appended to an nn.Sequential, whose own frame runs the loop.
        print("block", x.shape)
        return torch.relu(self.proj(x))


class Stack(nn.Module):
    def __init__(self, dim: int, depth: int):
        super().__init__()
        self.layers = nn.Sequential()
        for _ in range(depth):
            self.layers.append(Block(dim))

    def forward(self, x):
        return self.layers(x)
