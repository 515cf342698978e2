"""An attention kernel that warns about head sizes its authors never tried. Dynamo decides `width
not in [...]` while tracing, so a model built with a listed size never traces the warning
(measured under torch 2.15, two sequence lengths each: 0 breaks for widths 16 and 32, 4 for 24). Found, low, with
the sizes that make it run."""
import warnings

import torch
from torch import nn


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    width = q.shape[-1]
    if width not in (16, 32, 64, 128):
        warnings.warn(f"head width {width} is untested; expect slow kernels")
    scores = (q @ k.transpose(-1, -2)) / width**0.5
    return scores.softmax(-1) @ v


class Attention(nn.Module):
    def __init__(self, dim: int = 64, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        return attend(q, k, v).transpose(1, 2).reshape(b, n, -1)
