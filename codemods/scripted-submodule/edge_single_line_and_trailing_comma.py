"""TCF109 edge: two scripted submodules in one class: one on a line of its own (replaced by its
argument), one with a trailing comma (no fix: dropping the name would leave a tuple)."""
import torch
from torch import nn


class Act(nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act1 = torch.jit.script(Act())
        self.act2 = torch.jit.script(
            Act(),
        )

    def forward(self, x):
        return self.act2(self.act1(x))
