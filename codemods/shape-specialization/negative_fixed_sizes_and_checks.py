"""Sizes that do not change between calls: the number of prefix tokens and layers a model is built
with, a config int, the module's own table sizes, the channel count of the input, and a size test
that only rejects a wrong input (it raises; the other side never compiles). None of these is
specialized anew from call to call. A position grid stored on `self` and rebuilt when the input's
width differs is TCF207's finding (the attribute), not this rule's."""
import torch
from torch import nn


class PrefixedEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_prefix_tokens = config.num_prefix_tokens
        self.num_heads = config.num_heads
        self.in_chans = config.in_chans
        self.layers = nn.ModuleList(nn.Linear(config.dim, config.dim) for _ in range(config.depth))
        self.pos_embed = nn.Parameter(torch.zeros(1, config.num_patches, config.dim))

    def forward(self, x, feature_offset: int = 0):
        B, C, L = x.shape
        if C == 1:
            x = x.expand(-1, 3, -1)
        if C != self.in_chans:
            raise ValueError(f"expected {self.in_chans} channels, got {C}")
        npatch = x.shape[2]
        if npatch != self.pos_embed.shape[1]:
            raise ValueError("wrong number of patches")
        if self.num_heads > 1:
            x = x * 2
        tokens = x.transpose(1, 2)
        prefix = tokens[:, : self.num_prefix_tokens]
        last = self.layers[len(self.layers) - 1]
        return last(tokens[:, self.num_prefix_tokens :]) + prefix.mean(1, keepdim=True)


class CachedGrid(nn.Module):
    def __init__(self):
        super().__init__()
        self.grid = None

    def forward(self, x):
        h, w = x.shape[-2:]
        if self.grid is None or self.grid.shape[-1] != w:
            self.grid = torch.stack(torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij"))
        return x + self.grid.sum(0)
