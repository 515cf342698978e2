# `def forward(self, x): print(x); return x` on one line: the print shares its line with other
# code, so it cannot be wrapped without reformatting the def.
# tcfix: TCF101 reported WITHOUT a fix.
import torch
from torch import nn


class Tap(nn.Module):
    def forward(self, x): print(x); return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), Tap(), nn.ReLU())

    def forward(self, x):
        return self.net(x)
