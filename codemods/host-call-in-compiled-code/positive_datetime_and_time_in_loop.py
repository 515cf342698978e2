"""TCF107 positive: a clock read inside the loop over blocks (critical: a graph break in a loop
makes Dynamo run the whole forward eagerly) and a `datetime.now()` stamp (GB0156)."""
import time
from datetime import datetime

from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim: int = 32, depth: int = 3):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.timings = []

    def forward(self, x):
        stamp = datetime.now()
        for block in self.blocks:
            t0 = time.time()
            x = block(x).relu()
            self.timings.append((stamp, time.time() - t0))
        return x
