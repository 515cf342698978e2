# A method named `forward` on a class that is not an nn.Module (a numpy-style reference
# implementation used in tests): nothing compiles it.
# tcfix: no TCF101 finding.
import numpy as np
import torch
from torch import nn


class ReferenceLinear:
    def __init__(self, weight: np.ndarray, bias: np.ndarray):
        self.weight = weight
        self.bias = bias

    def forward(self, x: np.ndarray) -> np.ndarray:
        print("reference forward", x.shape)
        return x @ self.weight.T + self.bias


class Linear(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.inner = nn.Linear(cin, cout)

    def forward(self, x):
        return self.inner(x)
