# The helper that forward calls is decorated (`@torch.no_grad()` and a custom decorator): it is
# still traced, so its print still breaks the graph. The guard goes inside the body; the
# decorators stay as they are.
# tcfix: TCF101 (high) in `EMA._update_stats` (called from forward), fix guards the print.
import functools

import torch
from torch import nn


def count_calls(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return fn(*args, **kwargs)

    wrapper.calls = 0
    return wrapper


class EMA(nn.Module):
    def __init__(self, dim: int, momentum: float = 0.99):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(dim))

    @torch.no_grad()
    @count_calls
    def _update_stats(self, x):
        self.running_mean.mul_(self.momentum).add_(x.mean(0), alpha=1 - self.momentum)
        print("running mean norm", self.running_mean.norm())

    def forward(self, x):
        if self.training:
            self._update_stats(x)
        return x - self.running_mean
