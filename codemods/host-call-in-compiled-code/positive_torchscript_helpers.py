"""TCF107 positive: TorchScript helpers Dynamo marks as skipped break the graph (GB0007, measured
under torch 2.15). `torch.jit.isinstance` of a plain class becomes the builtin `isinstance` (safe:
the same test in eager mode and in TorchScript); of a container type, or of a name that may be a
typing alias (`isinstance` would raise TypeError on it), it stays, reported."""
from typing import Dict, Tuple

import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, dim: int = 4):
        super().__init__()
        self.up = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, skip=None) -> torch.Tensor:
        h = self.up(x)
        if skip is not None and torch.jit.isinstance(skip, torch.Tensor):
            h = h + skip
        return h


Pair = Tuple[torch.Tensor, torch.Tensor]


class PairHead(nn.Module):
    def forward(self, x):
        if torch.jit.isinstance(x, Pair):
            return x[0] + x[1]
        return x


class Pyramid(nn.Module):
    def forward(self, features) -> torch.Tensor:
        if torch.jit.isinstance(features, Dict[str, torch.Tensor]):
            return torch.stack(list(features.values())).sum(0)
        return features


class Branches(nn.Module):
    def __init__(self, dim: int = 4):
        super().__init__()
        self.left = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        future = torch.jit.fork(self.left, x)
        return torch.jit.wait(future) + x
