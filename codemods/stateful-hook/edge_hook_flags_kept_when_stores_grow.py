"""TCF202 edge: hooks on blocks forward runs in a loop whose flag tests cannot be taken out.

Taking a hook's flag test out makes it record on every call. That is refused, and the hook keeps
the `@torch.compiler.disable` fix (whose title says how to keep one graph by hand), when what it
records would then grow (a key that changes on every call), keep an output's autograd graph alive
(not detached), or change text in a multi-line string when the block moves.
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


class Probe:
    def __init__(self):
        self.active = False
        self.seen = {}
        self.last = None


def watch_growing(model: Stack, probe: Probe):
    def hook(module, inputs, output):
        if probe.active:
            probe.seen[len(probe.seen)] = output.detach()

    for block in model.blocks:
        block.register_forward_hook(hook)


def watch_attached(model: Stack, probe: Probe):
    def hook(module, inputs, output):
        if probe.active:
            probe.last = output

    for block in model.blocks:
        block.register_forward_hook(hook)


def watch_with_note(model: Stack, probe: Probe):
    def hook(module, inputs, output):
        if probe.active:
            probe.note = """latest output,
            kept for the logger"""

    for block in model.blocks:
        block.register_forward_hook(hook)
