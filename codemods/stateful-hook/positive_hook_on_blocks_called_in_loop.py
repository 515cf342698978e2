"""TCF202 positive: a stateful hook is registered on blocks that `forward` calls in a loop
(`for blk in self.blocks: x = blk(x)`).

The hook's guard makes every toggle of `probe.active` recompile the whole forward. tcfix should report
the read and offer `@torch.compiler.disable` above `def hook` (the fix then costs one graph break per
block, inside the loop).
"""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))


class Tower(nn.Module):
    def __init__(self, dim: int = 64, depth: int = 6):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for blk in self.blocks:
            x = blk(x)
        return x


class Probe:
    def __init__(self):
        self.active = False
        self.stats: list[torch.Tensor] = []


def build(dim: int = 64):
    model = Tower(dim)
    probe = Probe()

    def hook(module, inputs, output):
        if probe.active:
            probe.stats.append(output.detach().std())

    for blk in model.blocks:
        blk.register_forward_hook(hook)
    return torch.compile(model), probe
