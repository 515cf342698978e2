"""A ternary on tensor data and an `or` whose first operand is a tensor test."""
import torch
from torch import nn


class Router(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.gate = nn.Linear(dim, 2)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = self.gate(x)
        route = logits[..., 0] if logits.sum() > 0 else logits[..., 1]
        use_mask = mask.any() or mask.numel() == 0
        return route * use_mask
