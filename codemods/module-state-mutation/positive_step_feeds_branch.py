import torch
from torch import nn


class PeriodicStats(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.step = 0
        self.log_every = 100

    def forward(self, x):
        self.step += 1
        y = self.fc(x)
        if self.step % self.log_every == 0:
            y = y * 1.0
        return y
