# A print used as an expression: the body of a lambda registered as a forward hook.
# An expression cannot be wrapped in an `if`.
# tcfix: TCF101 (high) in the hook, reported WITHOUT a fix.
import torch
from torch import nn


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 4))
        self.body[0].register_forward_hook(lambda module, inputs, output: print(output.shape))

    def forward(self, x):
        return self.body(x)
