"""Buffers stored back without a break: registered with register_buffer, or given a new tensor."""
import torch
from torch import nn


class Registered(nn.Module):
    def __init__(self, length: int = 32, dim: int = 8):
        super().__init__()
        # A plain tensor registered as a buffer: assigning it back is traced.
        self.register_buffer("table", torch.randn(length, dim), persistent=False)

    def forward(self, x):
        self.table = self.table.to(device=x.device, dtype=x.dtype)
        return x + self.table[: x.shape[1]]


class NewTensors(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.running = nn.Buffer(torch.zeros(dim))
        self.table = nn.Buffer(torch.randn(4, dim))

    def forward(self, x):
        # New tensors carry no buffer marks: no break.
        self.running = self.running.detach() * 0.9 + x.mean(dim=(0, 1)) * 0.1
        # Converted into a local, the buffer itself is left alone.
        table = self.table.to(dtype=x.dtype)
        return x + self.running + table[0]

    def move(self, device):
        # Not compiled: an eager helper.
        self.table = self.table.to(device)


class MovedOnlyWhenElsewhere(nn.Module):
    def __init__(self):
        super().__init__()
        self.lookup = nn.Buffer(torch.arange(8))

    def forward(self, ids):
        # Converted only when the device differs: .to() then returns a new, unmarked tensor.
        if self.lookup.device != ids.device:
            self.lookup = self.lookup.to(ids.device)
        return self.lookup[ids]
