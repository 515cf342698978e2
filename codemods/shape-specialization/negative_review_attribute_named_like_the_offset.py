"""A patch embedding that drops a fixed number of prefix tokens kept on the module (`self.offset`)
and takes an `offset` argument it only adds to the positions, never as a slice bound. The slice
reads the module's own constant, not the argument: one value per model, nothing to specialize on.
tcfix: nothing."""
import torch
from torch import nn


class PatchTokens(nn.Module):
    def __init__(self, dim: int, prefix_tokens: int = 1):
        super().__init__()
        self.offset = prefix_tokens
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        tokens = self.proj(x[:, self.offset :])
        return tokens + offset
