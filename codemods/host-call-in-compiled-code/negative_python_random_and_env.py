"""TCF107 negative: Python's `random` module, `os.getenv` / `os.environ` and
`torch.cuda.synchronize()` are traced by Dynamo in torch 2.15 (no graph break, measured), and
`np.random` draws with a shape run through torch's numpy layer."""
import os
import random

import numpy as np
import torch
from torch import nn


class AugmentingEncoder(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.debug = os.getenv("ENCODER_DEBUG") == "1"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if random.random() < 0.5:
            x = x.flip(-1)
        scale = random.uniform(0.9, 1.1)
        if os.environ.get("ENCODER_SYNC"):
            torch.cuda.synchronize()
        noise = torch.from_numpy(np.random.randn(*x.shape)).to(x.dtype)
        jitter = torch.from_numpy(np.random.normal(0.0, 0.01, size=x.shape[-1])).to(x.dtype)
        return self.proj(x * scale + noise * 0.01 + jitter)
