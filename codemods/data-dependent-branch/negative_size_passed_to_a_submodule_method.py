"""A forward that hands its submodule's method a batch size, then the tensor. The method's `n`
is the size (a Python int), not the tensor: `if n > 2:` is decided while tracing (measured under
torch 2.15: 0 breaks). The call binds `self.encoding` to the method's `self`, so `n` takes the
first argument. No finding."""
import torch
from torch import nn


class Encoding(nn.Module):
    def __init__(self, width: int = 4):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(width))

    def encode(self, n, x):
        if n > 2:
            return x * self.scale
        return x


class Model(nn.Module):
    def __init__(self, width: int = 4):
        super().__init__()
        self.encoding = Encoding(width)

    def forward(self, x):
        return self.encoding.encode(x.shape[0], x)
