# A helper with an opt-in chunked path: `chunk` defaults to None and no call in the file passes
# it, so the loop over the input's size under `if chunk is not None:` never runs (real shape: a
# triangle-update projection with an in-place chunking option only an unused code path asks for).
# tcfix: no TCF204 finding.
import torch
from torch import nn


class PairUpdate(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.left = nn.Linear(dim, dim)
        self.right = nn.Linear(dim, dim)

    def _combine(self, a: torch.Tensor, b: torch.Tensor, chunk: int | None = None) -> torch.Tensor:
        if chunk is not None:
            for start in range(0, a.shape[0], chunk):
                a[start : start + chunk] = a[start : start + chunk] @ b[start : start + chunk]
            return a
        return a @ b

    def forward(self, pair: torch.Tensor) -> torch.Tensor:
        return self._combine(self.left(pair), self.right(pair).transpose(-1, -2))
