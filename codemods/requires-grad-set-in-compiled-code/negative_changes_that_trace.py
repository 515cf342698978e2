"""TCF112 negative: what traces under torch 2.15. Turning gradients off on a fresh tensor,
`requires_grad_()` on a parameter (it already requires grad: a no-op), reading `requires_grad`, and
changes made outside compiled code."""
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, dim: int = 4):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))
        self.proj = nn.Linear(dim, dim)

    def freeze_scale(self):
        # Setup code, not compiled.
        self.scale.requires_grad = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.scale.requires_grad_()
        h = self.proj(x).detach()
        h.requires_grad_(False)
        if h.requires_grad:
            h = h * 2
        return h * self.scale


def make_trainable(model: nn.Module) -> None:
    for p in model.parameters():
        p.requires_grad = True
