"""A block whose `forward` takes its input without a type annotation, as most models write it
(`def forward(self, x)`). The input of a module's forward is a tensor unless the code says
otherwise, so the test on its values breaks the graph exactly as with `x: torch.Tensor`.
tcfix: TCF104 on `if x.sum() > 0:` (fixed with torch.where), TCF103 on `x.item()`."""
import torch
from torch import nn


class GatedScale(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        if x.sum() > 0:
            x = x * 2.0
        peak = x.abs().max().item()
        return self.proj(x) / peak


def step(batch, target):
    # A function handed to torch.compile: its positional inputs are tensors too.
    if (batch - target).abs().mean() > 1.0:
        batch = batch.clamp(-1.0, 1.0)
    return batch


compiled_step = torch.compile(step)
