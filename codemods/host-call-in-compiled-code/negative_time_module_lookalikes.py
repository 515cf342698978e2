"""TCF107 negative: names that look like clocks but are not: a local `time` tensor (diffusion
timesteps), `self.time_embed(...)`, an attribute `.time()` of a non-time object."""
import torch
from torch import nn


class TimestepEmbedder(nn.Module):
    def __init__(self, dim: int = 32):
        super().__init__()
        self.time_embed = nn.Sequential(nn.Linear(1, dim), nn.SiLU(), nn.Linear(dim, dim))

    def forward(self, x: torch.Tensor, time: torch.Tensor) -> torch.Tensor:
        t = self.time_embed(time[:, None].float())
        return x + t
