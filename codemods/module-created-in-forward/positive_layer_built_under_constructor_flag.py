"""A relative-position bias that can grow its table for extra prefix buckets when asked to at
construction (`grow=True`): forward builds the bigger `nn.Embedding` once, copies the trained
rows and turns the flag off. Built as its defaults say (`grow=False`), the branch never runs and
Dynamo never traces it; a config that passes `grow=True` does pay the break and the recompile.
tcfix reports it, low, saying so ("only when `PrefixBias` is built with `grow=True`"). The
same branch on a flag some call in the file turns on (`TiledBias`) keeps its severity."""
import torch
from torch import nn


class PrefixBias(nn.Module):
    def __init__(self, buckets: int = 32, heads: int = 4, grow=False):
        super().__init__()
        self.buckets = buckets
        self.grow = grow
        self.table = nn.Embedding(buckets, heads)

    def forward(self, positions: torch.Tensor):
        if self.grow:
            bigger = nn.Embedding(self.buckets + 2, self.table.embedding_dim)
            bigger.weight.data[: self.buckets] = self.table.weight.data
            self.table = bigger
            self.grow = False
        return self.table(positions)


class TiledBias(nn.Module):
    def __init__(self, buckets: int = 32, heads: int = 4, tile=False):
        super().__init__()
        self.tile = tile
        self.buckets = buckets
        self.table = nn.Embedding(buckets, heads)

    def forward(self, positions: torch.Tensor):
        if self.tile:
            self.table = nn.Embedding(self.buckets * 2, self.table.embedding_dim)
            self.tile = False
        return self.table(positions)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.prefix = PrefixBias()
        self.tiled = TiledBias(tile=True)

    def forward(self, positions: torch.Tensor):
        return self.prefix(positions) + self.tiled(positions)
