"""A helper that compiled code calls only under a setting the defaults leave off runs only with
that setting: `masked_average` is called only when `Encoder` is built with `pool=True`, and
`Rollout.unroll` only when `forward` is called with `steps > 1` (1 by default). Their findings stay,
low, and say which call makes them run. `normalized` is called outside any branch: its finding
stays medium (torch 2.15, five lengths: `Encoder` 5 graphs from `normalized` alone; `Rollout` 2
graphs by default, 5 with `steps=2`)."""
import einx
import torch
from torch import nn


def masked_average(x, mask):
    x = einx.where("b n, b n d, -> b n d", mask, x, 0.0)
    return x.sum(1) / mask.sum(1, keepdim=True)


def normalized(x):
    return einx.divide("b n d, b n -> b n d", x, x.norm(dim=-1))


class Encoder(nn.Module):
    def __init__(self, dim, pool=False):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.pool = pool

    def forward(self, x, mask):
        x = normalized(self.proj(x))
        if self.pool:
            return masked_average(x, mask)
        return x


class Rollout(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def unroll(self, x, steps):
        return einx.multiply("b n d, b -> b n d", x, torch.arange(x.shape[0]) * steps)

    def forward(self, x, steps=1):
        if steps > 1:
            return self.unroll(x, steps)
        return self.proj(x)
