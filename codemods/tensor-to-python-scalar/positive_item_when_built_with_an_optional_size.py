"""Branches a module's defaults never take, written three ways: through the file's own test for
`None` (`present(self.token_cap)`, whatever the helper is called: its body says what it does),
through a flag stored as whether an argument was passed (`self.clamped = present(clamp)`), and
after an early `return` on a flag that is off (`if not self.gated: return ...`). Built as its
defaults say, the pooler takes none of them, so Dynamo traces none of the `.item()` calls: each
finding stays, low, and names the construction that makes it real. `self.scale is not None`
holds whatever the argument (`scale` is stored as a number or 1.0): no condition there."""
import torch
from torch import nn


def present(value):
    """Whether an optional argument was given."""
    return value is not None


class TokenPooler(nn.Module):
    def __init__(self, dim: int = 16, token_cap=None, clamp=None, gated: bool = False, scale=None):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.token_cap = token_cap
        self.clamped = present(clamp)
        self.gated = gated
        self.scale = scale if scale is not None else 1.0

    def forward(self, x):
        if present(self.token_cap):
            longest = int(x.abs().amax().item())
            x = x[:, :longest]
        if self.clamped:
            bound = x.std().item()
            x = x.clamp(-bound, bound)
        if self.scale is not None:
            peak = x.max().item()
            x = x / (1.0 + peak)
        if not self.gated:
            return self.proj(x).mean(1)
        gate = x.sigmoid().mean().item()
        return self.proj(x * gate).mean(1)


model = torch.compile(TokenPooler())
