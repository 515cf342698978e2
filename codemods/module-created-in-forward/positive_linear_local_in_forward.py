import torch
from torch import nn


class Fusion(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.norm = nn.LayerNorm(dim)

    def forward(self, a, b):
        proj = nn.Linear(self.dim * 2, self.dim)
        return self.norm(proj(torch.cat([a, b], dim=-1)))
