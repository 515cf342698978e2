"""TCF202 edge: the stateful hook already has a decorator (`@torch.no_grad()`).

tcfix should report the read of `stats.enabled` and put `@torch.compiler.disable` directly above the
`def`, below the existing decorator: the disabled function runs eagerly under no-grad.
"""
import torch
from torch import nn


class RunningStats:
    def __init__(self):
        self.enabled = True
        self.mean: torch.Tensor | None = None

    def freeze(self) -> None:
        self.enabled = False


def track_output_mean(layer: nn.Module, stats: RunningStats, momentum: float = 0.01):
    @torch.no_grad()
    def hook(module, inputs, output):
        if stats.enabled:
            batch_mean = output.mean(dim=0)
            stats.mean = batch_mean if stats.mean is None else torch.lerp(stats.mean, batch_mean, momentum)

    return layer.register_forward_hook(hook)
