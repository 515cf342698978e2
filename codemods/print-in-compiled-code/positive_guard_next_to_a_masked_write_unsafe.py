"""TCF101 positive: the print's break keeps the masked write below it in a graph of its own. Guarded,
the print is gone under compile, the write is traced with the code before it, and in training
AOTAutograd gives that code up to eager too (TCF105's hazard; measured under torch 2.15 with
aot_eager, one training step: frames compiled 2 of 3 -> 1 of 2, graphs 2 -> 1). So the guard is
unsafe here, and says why."""
import torch
from torch import nn


class Merge(nn.Module):
    def __init__(self, dim: int = 4):
        super().__init__()
        self.embed = nn.Linear(dim, dim)
        self.image = nn.Linear(dim, dim)

    def forward(self, tokens: torch.Tensor, is_image: torch.BoolTensor) -> torch.Tensor:
        h = self.embed(tokens)
        print("merging", h.shape)
        out = h.clone()
        out[is_image] = self.image(h)[is_image]
        return out
