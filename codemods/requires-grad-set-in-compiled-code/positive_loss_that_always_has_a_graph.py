"""TCF112 positive: an auxiliary loss starts from a zero buffer and is made to require grad in
training; `requires_grad_()` on a buffer breaks the graph (measured under torch 2.15)."""
import torch
from torch import nn


class Codebook(nn.Module):
    def __init__(self, size: int = 16, dim: int = 4):
        super().__init__()
        self.embed = nn.Parameter(torch.randn(size, dim))
        self.register_buffer("zero", torch.tensor(0.0), persistent=False)

    def forward(self, x: torch.Tensor):
        aux_loss = self.zero
        if self.training:
            aux_loss.requires_grad_()
        fresh = torch.zeros(()).requires_grad_(requires_grad=True)
        codes = torch.cdist(x, self.embed).argmin(-1)
        return codes, aux_loss + fresh
