# `if self.debug: print(...)` on one line, and a print with a trailing comment. The one-line `if`
# body shares its line with the `if`: report it without a fix (or fix the whole `if`). The print
# with a trailing comment stands alone: it is guarded and the comment stays with it.
# tcfix: two TCF101 findings; the first without a fix, the second fixed.
import torch
from torch import nn


class Norm(nn.Module):
    def __init__(self, dim: int, debug: bool = False):
        super().__init__()
        self.debug = debug
        self.norm = nn.RMSNorm(dim)

    def forward(self, x):
        if self.debug: print("Norm input", x.shape)
        y = self.norm(x)
        print("Norm output", y.shape)  # TODO remove before release
        return y
