"""TCF101 edge: output next to state that is no once-only gate keeps the Safe guard.

- `Scaled.forward` prints and sets `self.saw_input = True`, a flag no test of the file reads.
- `find_table` warns and stores `None` for a missing name in a module-level cache that an `if`
  reads (the shape of transformers' `lazy_load_kernel`): `None` fails the cache test, so the next
  call warns again; the store gates nothing.

tcfix should report both output calls with the Safe guard.
"""
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)
_TABLES = {}


def find_table(name: str):
    if name in _TABLES and _TABLES[name] is not None:
        return _TABLES[name]
    logger.warning(f"no table named {name}")
    _TABLES[name] = None
    return None


class Scaled(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.saw_input = False

    def forward(self, x):
        y = self.proj(x)
        print("norm", y.norm())
        self.saw_input = True
        find_table("scales")
        return y
