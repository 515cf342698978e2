"""An optional argument whose `None` default `__init__` replaces before storing whether it is set:
`if scale is None: scale = dim ** -0.5`, then `self.scaled = present(scale)`. Built as its
defaults say the module is scaled, so the `.item()` behind `if self.scaled:` runs on every call
(measured under torch 2.15: 1 break with the defaults). A parameter `__init__` binds again is no
flag: the finding keeps its severity and says no condition."""
import torch
from torch import nn


def present(value):
    return value is not None


class ScaledProjection(nn.Module):
    def __init__(self, dim: int = 16, scale=None):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        if scale is None:
            scale = dim**-0.5
        self.scaled = present(scale)

    def forward(self, x):
        if self.scaled:
            return self.proj(x) * x.abs().amax().item()
        return self.proj(x)


model = torch.compile(ScaledProjection())
