import torch
from torch import nn

DROP = 0.1


class Block(nn.Module):
    def __init__(self, dim, p=DROP):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        self.drop = nn.Dropout(DROP)
        return self.drop(self.fc(x))
