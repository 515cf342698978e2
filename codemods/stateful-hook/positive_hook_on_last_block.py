"""TCF202 positive: a stateful hook registered once, on the last block of a `ModuleList` that
forward runs in a loop (`model.blocks[-1]`).

Registered outside any loop, the hook still runs inside forward's loop over the blocks: the graph
break that `@torch.compiler.disable` puts there makes Dynamo run the whole forward eagerly
(measured with torch 2.15: the forward frame fails, each block compiles on its own). So the fix is
Unsafe, and its title says so.
"""
import torch
from torch import nn


class Tower(nn.Module):
    def __init__(self, dim: int = 32, depth: int = 4):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return x


class Probe:
    def __init__(self):
        self.active = False
        self.last = None


def watch_last_block(model: Tower, probe: Probe):
    def hook(module, inputs, output):
        if probe.active:
            probe.last = output.detach()

    return model.blocks[-1].register_forward_hook(hook)


def evaluate(model, probe, batch):
    probe.active = True
    return torch.compile(model)(batch)
