"""A helper that loads an optional kernel on its first call and remembers the outcome in a
module global: every later call returns at the guard. Its warnings run once per process, on the
first call (one graph break, then the global is set): no finding there."""
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)

_kernel = None  # None: not tried yet; False: unavailable


def _load_kernel_once():
    """Try the optional kernel once."""
    global _kernel
    if _kernel is not None:
        return
    try:
        import fancy_kernels

        _kernel = fancy_kernels.load("nms")
    except ImportError:
        logger.warning("fancy_kernels is missing: masks are not cleaned")
        _kernel = False


def clean_masks(masks):
    _load_kernel_once()
    if _kernel:
        return _kernel(masks)
    return masks


class MaskHead(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor):
        return clean_masks(self.proj(x))
