import torch
from torch import nn


class Early(nn.Module):
    def __init__(self, dim):
        self.calls = 0
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        self.calls += 1
        return self.fc(x)
