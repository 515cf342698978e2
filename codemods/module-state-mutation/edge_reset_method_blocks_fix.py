import torch
from torch import nn


class Accumulator(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.n = 0

    def reset(self):
        self.n = 0

    def forward(self, x):
        self.n += 1
        return self.fc(x) / self.n
