"""Math that keeps sizes symbolic, math on numbers the model fixes, and math outside compiled code."""
import math

import torch
from torch import nn


def sign_of(value):
    # No test against torch's symbolic types: nothing says a size reaches it.
    return math.copysign(1.0, value)


class Scaled(nn.Module):
    def __init__(self, dim: int = 8, max_distance: int = 128):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.dim = dim
        self.max_distance = max_distance
        # In __init__: runs once, eagerly.
        self.table_scale = math.log(max_distance) / math.log(2.0)

    def forward(self, x, tokens: list):
        length = x.shape[1]
        # sqrt, floor, ceil and log2 stay symbolic under Dynamo.
        scale = math.sqrt(length) + math.floor(length / 2) + math.ceil(length / 3) + math.log2(length)
        # Numbers the model fixes: its own attributes, its weights' sizes, a list's length.
        fixed = math.log(self.dim) * math.exp(self.proj.weight.shape[0] / self.max_distance)
        count = math.log1p(len(tokens))
        return self.proj(x) * scale * fixed * count * sign_of(self.dim)
