"""A relative-position bias that, on the first call after loading, widens its embedding table by
two rows: it builds a larger `nn.Embedding` as a local, copies the trained rows into it, stores
it on `self` and clears the flag that asked for it. The layer is built once and kept (trained and
saved), not rebuilt untrained on every call. Measured under torch 2.15: one graph break (building
parameters, GB0264) and one recompile, on that first call only. tcfix reports it at medium
severity and says so; a local layer that is never stored stays the every-call case."""
import torch
from torch import nn


class PositionBias(nn.Module):
    def __init__(self, buckets: int = 8, heads: int = 2, widen: bool = True):
        super().__init__()
        self.buckets = buckets
        self.heads = heads
        self.widen = widen
        self.table = nn.Embedding(buckets, heads)

    def forward(self, bucket_ids: torch.Tensor):
        if self.widen:
            wider = nn.Embedding(self.buckets + 2, self.heads)
            wider.weight.data[: self.buckets] = self.table.weight.data
            self.table = wider
            self.widen = False
        return self.table(bucket_ids)


class LazyNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = None

    def forward(self, x: torch.Tensor):
        if self.norm is None:
            self.norm = nn.LayerNorm(x.shape[-1])
        return self.norm(x)
