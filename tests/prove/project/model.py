"""A small transformer-shaped block with two hazards a training loop hits: a print of a shape in
forward, and a log line in a helper it calls (tests/prove.rs pins what `tcfix prove` makes of it)."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, 2, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x):
        h = self.norm(x)
        print("block input", h.shape)
        attended, _ = self.attention(h, h, h, need_weights=False)
        x = x + attended
        return x + self.mlp(report(self.norm(x)))


def report(h):
    print("mlp input", h.shape)
    return h


class TinyModel(nn.Module):
    def __init__(self, vocab=32, width=16, depth=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(x)
