import torch
import torch.nn as nn


class Scheduler(nn.Module):
    """Anneals a temperature with the number of forward calls."""

    def __init__(self, dim, warmup=1000):
        super().__init__()
        self.head = nn.Linear(dim, dim)
        self.warmup = warmup
        self.calls = 0

    def forward(self, x):
        self.calls = self.calls + 1
        return self.head(x) * (self.calls / self.warmup)
