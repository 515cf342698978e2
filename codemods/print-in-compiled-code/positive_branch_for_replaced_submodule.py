"""A branch on `isinstance(self.proj, AdapterLinear)` where `__init__` builds `self.proj` as an
`nn.Linear`: an `nn.Linear` is never an `AdapterLinear` (a class of another package), so the
branch runs only after outside code swapped the submodule. The warning there stays, low, and says
so. A test against torch's own class (`nn.Linear` may be what it is) and a submodule built by a
factory argument (its class unknown) keep their severity."""
import warnings

import torch
from torch import nn


class Projection(nn.Module):
    def __init__(self, dim: int, norm_layer=nn.LayerNorm):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = norm_layer(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from adapters_lib import AdapterLinear, AdapterNorm

        if isinstance(self.proj, AdapterLinear):
            warnings.warn("adapters on the projection are ignored")
        if isinstance(self.proj, nn.Linear):
            print("a plain projection")
        if isinstance(self.norm, AdapterNorm):
            print("an adapted norm")
        return self.norm(self.proj(x))
