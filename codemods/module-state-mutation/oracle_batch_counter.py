"""Oracle fixture for module-state-mutation (TCF203).

A feature normalizer that keeps a cumulative average of the batch means it has seen, counting the
batches in a Python int `self.count`. Dynamo treats int attributes of a module as constants: every
call sees a new `count`, fails the guard `self.count == N` and recompiles, until the recompile limit
(8) makes it give up and run `forward` eagerly. tcfix (with --unsafe-fixes) registers `count` as a 0-d
buffer and updates it out of place, so Dynamo reads it as a graph input and compiles once.
"""
import torch
from torch import nn


class CumulativeNorm(nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 32):
        super().__init__()
        self.register_buffer("running_mean", torch.zeros(dim), persistent=False)
        self.count = 0
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        self.count += 1
        self.running_mean = self.running_mean + (x.mean(0).detach() - self.running_mean) / self.count
        return self.net(x - self.running_mean)


def oracle_cases():
    batches = [(torch.randn(8, 16),) for _ in range(12)]
    return [
        {
            "name": "inference",
            "factory": lambda: CumulativeNorm().eval(),
            "inputs": batches,
            "unsafe_fixes": True,
            "expect": {"recompiles": (">=7", 0), "eager_frames": (">=1", 0)},
        },
        {
            "name": "training",
            "factory": CumulativeNorm,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"recompiles": (">=7", 0)},
        },
    ]
