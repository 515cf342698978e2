"""TCF101 positive, Unsafe: a module warns once through a helper. `forward` tests the flag and
calls `_note`, which logs and then sets the flag. The warn-once block is split across two
functions, so the guard can only go around the log call, and the flag is still set under compile:
the warning is never written, not even by a later eager call.

Measured under torch 2.15 (inference and a training step): before 2 graphs, 2 breaks, the warning
shown once; with the guard on the call alone 2 graphs, 0 breaks, the warning never shown; with the
test in `forward` guarded instead 1 graph and the warning shown by the next eager call.

tcfix should report `logger.warning()` in `_note` with the guard as an Unsafe fix naming `self.noted`.
"""
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Projection(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.noted = False
        self.proj = nn.Linear(dim, dim)

    def _note(self, message: str):
        logger.warning(message)
        self.noted = True

    def forward(self, x):
        if not self.noted:
            self._note("Projection runs without a bias warm-up")
        return self.proj(x)
