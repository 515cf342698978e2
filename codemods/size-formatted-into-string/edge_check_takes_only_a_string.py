"""TCF209 edge for the lambda fix: checks whose message parameter does not accept a callable
(annotated `str`, or not annotated) keep the findings and the fixes they had. A lambda passed
there would be raised as the message itself, so no lambda fix, whatever the check is called. A
message already passed as a lambda is built only when the check fails: no finding."""
from collections.abc import Callable

import torch
from torch import nn


def require_text(condition, message: str) -> None:
    """Raise with `message` unless `condition` holds."""
    if not condition:
        raise ValueError(message)


def require_unannotated(condition, message):
    """Raise with `message` unless `condition` holds."""
    if not condition:
        raise ValueError(message)


def require_lazily(condition, message: str | Callable[[], str]) -> None:
    """Raise with `message` (called if it is a callable) unless `condition` holds."""
    if not condition:
        raise ValueError(message() if callable(message) else message)


class Grid(nn.Module):
    def __init__(self, cell: int = 4):
        super().__init__()
        self.cell = cell

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        require_text(H % self.cell == 0, f"height {H} is not a multiple of {self.cell}")
        require_unannotated(W % self.cell == 0, f"width {W} is not a multiple of {self.cell}")
        require_lazily(H == W or H % self.cell == 0, lambda: f"a {H}x{W} grid")
        return x.flatten(2)
