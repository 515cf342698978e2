"""TCF104 positive: Dynamo traces numpy arrays as tensors, so a test on one reads tensor data
like its torch twin: checking that an input's size divides a patch size with `np.array(shape)`
breaks the graph on every call (measured under torch 2.15). No fix: eagerly the array is numpy,
which tcfix's torch rewrites (`torch.where`, `torch._assert_async`) do not take."""
import numpy as np
import torch
from torch import nn


class PatchEncoder(nn.Module):
    def __init__(self, patch: int = 2):
        super().__init__()
        self.patch = patch
        self.proj = nn.Conv2d(1, 4, patch, stride=patch)

    def check_size(self, spatial_shape):
        size = np.array(spatial_shape)
        remainder = (size % self.patch) > 0
        if remainder.any():
            bad = np.where(remainder)[0]
            raise ValueError(f"dimensions {bad} are not divisible by {self.patch}")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.check_size(x.shape[2:])
        return self.proj(x)
