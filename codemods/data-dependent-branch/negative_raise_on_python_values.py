"""Raises on metadata and Python values: Dynamo answers these tests while tracing; no finding."""
import torch
from torch import nn


class Checks(nn.Module):
    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        if x.dim() != 3:
            raise ValueError(f"expected a 3-d input, got {x.shape}")
        if labels is not None and labels.shape[-1] > x.shape[1]:
            raise ValueError("more labels than frames")
        if x.dtype not in (torch.float16, torch.float32):
            raise TypeError(x.dtype)
        return x
