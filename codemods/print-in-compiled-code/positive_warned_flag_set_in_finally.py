"""A warn-once flag set in a `finally` beside the print, and one set in a branch beside it:
guarding only the print would still set the flag under compile, so the message would never be
written, not even by a later eager call (measured under torch 2.15 on both shapes: 1 line
printed before, 0 after such a guard). The guard is offered only as an Unsafe fix that says so."""
import torch
from torch import nn


class SlowPathNotice(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.noticed = False
        self.reported = False

    def forward(self, x):
        if not self.noticed:
            try:
                print("taking the slow path")
            finally:
                self.noticed = True
        if not self.reported:
            print("reporting once")
            if self.training:
                self.reported = True
        return self.proj(x)


model = torch.compile(SlowPathNotice())
