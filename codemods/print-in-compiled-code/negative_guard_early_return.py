# forward returns early when compiling: everything after `if torch.compiler.is_compiling(): return`
# runs only in eager mode.
# tcfix: no TCF101 finding.
import torch
from torch import nn


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, kernel_size=7, stride=2, padding=3)

    def forward(self, x):
        y = self.conv(x)
        if torch.compiler.is_compiling():
            return y
        print("Stem output", tuple(y.shape), "min", y.min().item(), "max", y.max().item())
        return y
