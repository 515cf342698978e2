"""TCF209 positive: a key built from the sizes to look up a cache of position tables, and a name
stored on the module that formats them: both are read, so Dynamo builds them and pins the sizes
(measured: an f-string stored on `self` or put in a dict gives 5 graphs for 5 sizes, against 2).
No fix: the message says what to do."""
import torch
from torch import nn


class PosEmbed(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.dim = dim
        self.tables = {}
        self.last_grid = ""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, H, W, C = x.shape
        if f"{H}x{W}" not in self.tables:
            self.tables[f"{H}x{W}"] = torch.zeros(H, W, self.dim)
        self.last_grid = f"{H}x{W}"
        return x + self.tables[f"{H}x{W}"]
