import torch
from torch import nn


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.seen = 0  # keep this comment

    def forward(self, x):
        self.seen += x.shape[0]
        return self.fc(x) + self.seen
