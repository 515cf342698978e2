import torch
from torch import nn


class WarmStart(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.initialized = False

    def forward(self, x):
        if not self.initialized:
            x = x - x.mean()
            self.initialized = True
        return self.fc(x)
