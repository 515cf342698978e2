"""TCF109 positive without a fix: `torch.jit.script(module, example_inputs=...)` has more than the
module: the wrapper is removed by hand."""
import torch
from torch import nn


class Scale(nn.Module):
    def forward(self, x):
        return x * 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.jit.script(Scale(), example_inputs=[(torch.randn(2),)])

    def forward(self, x):
        return self.scale(x)
