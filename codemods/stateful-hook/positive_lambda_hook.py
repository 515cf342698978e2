"""TCF202 positive: a lambda registered as a forward hook reads `collector.enabled`.

tcfix should report the read and, since a lambda cannot take a decorator, wrap it:
`register_forward_hook(torch.compiler.disable(lambda m, i, o: ...))`.
"""
import torch
from torch import nn


class Collector:
    def __init__(self):
        self.enabled = False
        self.outputs: list[torch.Tensor] = []

    def record(self, output: torch.Tensor) -> None:
        self.outputs.append(output.detach())


def watch(layer: nn.Module, collector: Collector):
    return layer.register_forward_hook(lambda m, i, o: collector.record(o) if collector.enabled else None)
