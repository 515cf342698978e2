"""Loops over counts fixed by the model: unrolled once, never recompiled."""
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_layers = config.num_layers
        self.blocks = nn.ModuleList([nn.Linear(config.dim, config.dim) for _ in range(config.num_layers)])
        self.heads = config.heads

    def forward(self, x):
        for i in range(self.num_layers):
            x = self.blocks[i](x)
        for i in range(len(self.blocks)):
            x = x + 0
        for h in range(self.heads):
            x = x * 1
        for i in range(self.blocks[0].weight.shape[0] // 64):
            x = x + 0
        return x
