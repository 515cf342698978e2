# A debugging print left in forward: graph break GB0059 on every call.
# tcfix: TCF101 (high) on the print, fix wraps it in `if not torch.compiler.is_compiling():`.
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        print("MLP input", x.shape)
        return self.fc2(torch.relu(self.fc1(x)))
