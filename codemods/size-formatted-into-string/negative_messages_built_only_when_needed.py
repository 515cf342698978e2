"""TCF209 negative: messages that format a size but are built only when a check fails (an
`assert` statement's message, a `raise`), a lone field (`f"{H}"`, formatted only when read), a
whole shape (formatted without pinning a size), sizes
a `==` check of the function pins anyway (the width's message also formats the height, checked
on the line before), the module's own sizes, and output calls (TCF101's business: its guard
keeps the message from being built)."""
import logging

import torch
from torch import _assert, nn

logger = logging.getLogger(__name__)


class Stem(nn.Module):
    def __init__(self, size: int = 32, dim: int = 8):
        super().__init__()
        self.img_size = (size, size)
        self.proj = nn.Conv2d(3, dim, 4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        assert H % 4 == 0, f"height {H} must be a multiple of 4"
        if W % 4:
            raise ValueError(f"width {W} must be a multiple of 4")
        _assert(x.ndim == 4, f"expected an image batch, got shape {x.shape}")
        _assert(H == self.img_size[0], f"Input height ({H}) doesn't match model ({self.img_size[0]}).")
        _assert(W == self.img_size[1], f"Input size ({H}*{W}) doesn't match model ({self.img_size[0]}*{self.img_size[1]}).")
        _assert(self.proj.weight.shape[0] > 0, f"{self.proj.weight.shape[0]} filters")
        unread = f"{H}"
        logger.debug(f"stem input {H}x{W}")
        return self.proj(x)
