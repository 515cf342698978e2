"""Sizes read off the input handed to math functions Dynamo evaluates only on numbers."""
import math
from math import gcd

import torch
from torch import nn


class LengthScaledAttention(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x):
        batch, length, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        # The log of the sequence length scales the logits: a constant per length.
        scores = q @ k.transpose(-1, -2) * math.log(length) / math.sqrt(q.shape[-1])
        return scores.softmax(dim=-1) @ v


class TiledPool(nn.Module):
    def forward(self, image):
        height, width = image.shape[-2:]
        tile = gcd(height, width)
        return nn.functional.avg_pool2d(image, tile) * math.pow(image.size(1), 0.5)
