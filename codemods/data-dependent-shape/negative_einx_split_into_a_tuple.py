"""An einx pattern with two outputs gives a tuple, not a tensor: testing the tuple is plain
Python (measured with torch 2.15 and einx 0.4.3: no break there), and einx's own deprecation
warning for `rearrange` is another hazard (TCF210 reports the call). `graph=True` gives the
operation's code as a string.
tcfix: TCF210 on each einx call, nothing else."""
import einx
from torch import nn


class SplitHeads(nn.Module):
    def forward(self, x):
        parts = einx.rearrange("b (q + k) -> b q, b k", x, q=2)
        if parts:
            x = x + 1
        code = einx.sum("b [n]", x, graph=True)
        if code:
            x = x * 2
        return x
