"""A conversion on the right of `and` runs only when the left holds. `Refresher` is built with
`refresh_every=0`, so `self.every > 0 and ...` stops at its first part and never reads the counter:
the finding stays, low, and names the setting that makes it run (torch 2.15, three calls: 1 graph
and no break with the default, 4 graphs and a break with `refresh_every=2`). The same after an `or`
whose first part the default makes true (`strict=True`: 2 graphs and a break). `Sampler` tests a
tensor first: its conversion runs on every call and stays high."""
import torch
from torch import nn


class Refresher(nn.Module):
    def __init__(self, dim, refresh_every=0, strict=False):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.every = refresh_every
        self.strict = strict
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.calls.add_(1)
        if self.every > 0 and self.calls.item() % self.every == 0:
            x = x * 0.5
        lenient = not self.strict or bool(x.isfinite().all())
        return self.proj(x) * lenient


class Sampler(nn.Module):
    def __init__(self, dim, refresh_every=0):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.period = refresh_every

    def forward(self, x):
        if x.sum() > 0 and self.period > 0:
            x = x * 0.5
        return self.proj(x) * int(x.argmax().item())
