"""TCF209 edge: checks whose fix would change what the code does. A message that calls something
gets an Unsafe fix (the call would run only when the check fails); a name bound in the call
(`:=`) would be bound only then: no fix; a condition holding a tensor would become a branch on
its data (a graph break): no fix."""
import torch
from torch import _assert, nn


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.proj = nn.Conv2d(3, 8, 4, 4)

    def counted(self) -> int:
        self.calls += 1
        return self.calls

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        _assert(H % 4 == 0, f"height {H} on call {self.counted()}")
        _assert(W % 4 == 0, f"width {(w := W)} must be a multiple of 4")
        _assert(H > 0 and (x > -100).all(), f"bad input of height {H}")
        return self.proj(x) * w
