# The file only does `from torch import nn`: the name `torch` is not bound. The fix needs
# `torch.compiler.is_compiling()`, so it must also add `import torch`.
# tcfix: TCF101 (high), fix guards the print and adds `import torch` with the other imports.
from torch import nn


class Gate(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.act = nn.Sigmoid()

    def forward(self, x):
        print("gate input", x.shape)
        return x * self.act(self.gate(x))
