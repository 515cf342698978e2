"""TCF202 edge: two hooks made together; one could record on every call, the other cannot.

`keep_mean` only tests `watch.on` and overwrites a detached value: its test could be taken out. But
`keep_trace`, made by the same function, appends to a list while `watch.on` is set: it keeps its
guard, so forward recompiles when the flag flips whatever `keep_mean` does. tcfix offers no fix for
either, and says why for `keep_mean`.
"""
import torch
from torch import nn


class Watch:
    def __init__(self):
        self.on = False
        self.mean: dict[str, torch.Tensor] = {}
        self.trace: list[torch.Tensor] = []


def watch_blocks(blocks: nn.ModuleList, watch: Watch):
    for index, block in enumerate(blocks):

        def keep_mean(module, args, output, index=index):
            if not watch.on:
                return
            watch.mean[f"mean{index}"] = output.detach().mean()

        def keep_trace(module, args, output):
            if watch.on:
                watch.trace.append(output.detach().norm())

        block.register_forward_hook(keep_mean)
        block.register_forward_hook(keep_trace)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
