"""TCF201 edge: `__init__` ends with `if torch.compiler.is_compiling(): return`.

`__init__` is not compiled, so that branch means nothing to the fix: the pre-grow call goes after it,
once, and is then seen as pre-growing (a second run adds nothing). Found by fuzzing: the compiled
view of `__init__` used to stop at that return, hid the added call, and the fix was applied ten times.
"""
import torch
from torch import nn


class PositionalTable(nn.Module):
    def __init__(self, d, max_len=64):
        super().__init__()
        self.max_len = max_len
        self.register_buffer("pe", torch.empty(0, d), persistent=False)
        if torch.compiler.is_compiling():
            return

    def _extend_pe(self, n):
        if self.pe.size(0) >= n:
            return
        self.pe = torch.zeros(n, self.pe.shape[1], dtype=self.pe.dtype)

    def forward(self, x):
        self._extend_pe(x.size(0))
        return x + self.pe[: x.size(0)]
