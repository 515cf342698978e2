"""TCF202 edge: the collector hands its records out whole, so its readers are left alone.

The hook keeps the output's RMS while `stats.enabled` is on; tcfix takes the flag test out (the
hook records on every call). `Stats.snapshot` returns the dict itself rather than looping over it,
so no `if self.enabled:` can be put around a read: the fix changes only the hook, and its title
says that the code reading the records must check the flag.
"""
import torch
from torch import nn


class Stats:
    def __init__(self):
        self.enabled = False
        self.values: dict[str, torch.Tensor] = {}

    def snapshot(self):
        return dict(self.values)


def attach(blocks: nn.ModuleList, stats: Stats):
    for index, block in enumerate(blocks):

        def keep(module, args, output, index=index):
            if not stats.enabled:
                return
            stats.values[f"rms{index}"] = output.detach().pow(2).mean().sqrt()

        block.register_forward_hook(keep)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
        self.stats = Stats()
        attach(self.blocks, self.stats)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def step(net, x, n):
    net.stats.enabled = n % 10 == 0
    return net(x)
