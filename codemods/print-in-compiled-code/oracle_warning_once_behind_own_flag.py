"""TCF101 positive: a warning written once, behind a flag the block sets. The guard goes around the
whole block: guarding only the call would set the flag under compile and silence the warning for
good, also in later eager runs."""
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)
_seen_shapes = set()


class Scaler(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self._warned = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._warned:
            self._warned = True
            logger.warning("Scaler runs in float32; pass a half-precision input to save memory.")
        if x.shape[-1] not in _seen_shapes:
            _seen_shapes.add(x.shape[-1])
            print("first input of width", x.shape[-1])
        return self.proj(x)


def oracle_cases():
    inputs = [(torch.randn(2, 8),), (torch.randn(3, 8),), (torch.randn(2, 8),)]
    return [
        {
            # Eagerly the flag flips on the first call; compiled after the fix the block does not run,
            # so the flag stays off (the warning waits for an eager call) and nothing breaks.
            "name": "warn-once",
            "factory": Scaler,
            "inputs": inputs,
            "expect": {"graph_breaks": (">=1", 0), "eager_frames": (None, 0)},
        },
    ]
