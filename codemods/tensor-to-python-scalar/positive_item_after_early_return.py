"""After `if <test>: return ...`, the rest of the function runs only when the test fails. `Checked`
returns early unless it is built with `validate=True`, so its range check is off by default; a
config whose `max_positions` is set (4096) returns the table length before any position is read.
Both findings stay, low, with the condition (torch 2.15, three calls: 1 graph and no break with the
defaults; `validate=True` 2 graphs and a break, `max_positions=0` 3 graphs and breaks). `Plain`
returns early only for an empty input, a test on data: its conversion stays high."""
import torch
from torch import nn


class Checked(nn.Module):
    def __init__(self, dim, validate=False):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.validate = validate

    def forward(self, x, ids):
        if not self.validate:
            return self.proj(x)
        top = int(ids.max())
        return self.proj(x) + top


class TableConfig:
    def __init__(self, dim=8, max_positions=4096):
        self.dim = dim
        self.max_positions = max_positions


class Positions(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.proj = nn.Linear(config.dim, config.dim)

    def table_length(self, positions):
        if self.config.max_positions:
            return self.config.max_positions
        return int(positions.max().item()) + 1

    def forward(self, x, positions):
        return self.proj(x) * self.table_length(positions)


class Plain(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, ids):
        if x.numel() == 0:
            return x
        return self.proj(x) + int(ids.max())
