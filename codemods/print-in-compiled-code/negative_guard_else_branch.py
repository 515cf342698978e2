# The print is in the `else` of `if torch.compiler.is_compiling():`, i.e. eager only.
# tcfix: no TCF101 finding.
import torch
import torch.nn.functional as F
from torch import nn


class Pool(nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling():
            pooled = F.adaptive_avg_pool2d(x, 1)
        else:
            pooled = F.adaptive_avg_pool2d(x, 1)
            print("Pool:", tuple(x.shape), "->", tuple(pooled.shape))
        return pooled.flatten(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Conv2d(3, 8, 3)
        self.pool = Pool()

    def forward(self, x):
        return self.pool(self.features(x))
