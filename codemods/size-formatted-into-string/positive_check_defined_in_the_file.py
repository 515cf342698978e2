"""TCF209 positive: the file's own check asserts its message (Safe fix, proven by the oracle cases
below: 5 graphs for 5 sizes before, 2 after, outputs and gradients equal), called with sizes read
straight off the input (`x.size(2)`, `x.shape[3]`), in a window attention that takes any size."""
import torch
from torch import nn


def check(condition: bool, message: str):
    """Raise with `message` unless `condition` holds."""
    assert condition, message


class WindowAttention(nn.Module):
    def __init__(self, window: int = 4, dim: int = 8):
        super().__init__()
        self.window = window
        self.qkv = nn.Conv2d(dim, 3 * dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check(x.size(2) % self.window == 0, f"height {x.size(2)} is not a multiple of {self.window}")
        check(x.shape[3] % self.window == 0, f"width {x.shape[3]} is not a multiple of {self.window}")
        q, k, v = self.qkv(x).chunk(3, dim=1)
        return q * k.sigmoid() + v


def oracle_cases():
    # Sizes that are multiples of the window: the check holds on every call.
    images = [(torch.randn(2, 8, size, size),) for size in (8, 12, 16, 20, 24)]
    return [
        {
            "name": "inference",
            "factory": lambda: WindowAttention().eval(),
            "inputs": images,
            "no_grad": True,
            "expect": {"graphs": (5, 2), "recompiles": (4, 1), "graph_breaks": (0, 0)},
        },
        {
            "name": "training",
            "factory": WindowAttention,
            "inputs": images,
            "train": True,
            "expect": {"graphs": (5, 2), "recompiles": (4, 1), "graph_breaks": (0, 0)},
        },
    ]
