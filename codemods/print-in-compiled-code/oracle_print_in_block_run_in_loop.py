"""Oracle fixture for print-in-compiled-code (TCF101) and the loop amplifier.

A small transformer-style encoder whose block still prints a debugging line. The encoder runs its
blocks in a Python loop, so the print breaks the graph inside that loop: Dynamo gives up on
`Encoder.forward` and runs it eagerly (only each block gets its own small graphs). tcfix reports the
print as critical and guards it; after the fix the whole encoder is one graph.
"""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        print("block input", tuple(x.shape))
        return x + self.mlp(self.norm(x))


class Encoder(nn.Module):
    def __init__(self, dim: int = 32, depth: int = 3):
        super().__init__()
        self.embed = nn.Linear(16, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))


def oracle_cases():
    batches = [(torch.randn(2, 8, 16),) for _ in range(3)]
    return [
        {
            "name": "inference",
            "factory": lambda: Encoder().eval(),
            "inputs": batches,
            "expect": {"graph_breaks": (">=1", 0), "eager_frames": (">=1", 0), "graphs": (None, 1)},
        },
        {
            "name": "training",
            "factory": Encoder,
            "inputs": batches,
            "train": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (">=1", 0), "eager_frames": (">=1", 0), "graphs": (None, 1)},
        },
    ]
