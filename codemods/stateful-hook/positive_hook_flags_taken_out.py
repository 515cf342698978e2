"""TCF202 positive: metric hooks on every block, off by default, switched on by the training loop.

The hooks sit on blocks that forward runs in a loop, so `@torch.compiler.disable` would send
forward to eager. They only store detached values at keys fixed when each hook is made, so tcfix
offers the fix that keeps one graph (Unsafe): `if not collector.enabled: return` goes, the block of
`if collector.record_norms:` moves one level out, and the hooks record on every call. The code that
reads `collector.latest` must check the flags itself. Measured on the whole-model decoder oracle
(`tests/oracle/models/oracle_cached_position_decoder.py`), which has these hooks.
"""
import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self, dim: int = 16, depth: int = 3):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = torch.relu(block(x))
        return x


class Collector:
    def __init__(self):
        self.enabled = False
        self.record_norms = False
        self.latest: dict[str, torch.Tensor] = {}


def install(model: Stack, collector: Collector):
    for index, block in enumerate(model.blocks):

        def record(module, args, output, index=index):
            """Keeps each block's latest mean (and norm) for the logger."""
            if not collector.enabled:
                return
            collector.latest[f"block{index}.mean"] = output.detach().mean()
            if collector.record_norms:
                collector.latest[f"block{index}.norm"] = output.detach().norm(dim=-1).mean()

        block.register_forward_hook(record)


def train_step(model, collector, batch, step):
    collector.enabled = step % 10 == 0
    collector.record_norms = step % 100 == 0
    return model(batch)
