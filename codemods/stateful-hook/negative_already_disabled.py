"""TCF202 negative: the stateful hook is already decorated `@torch.compiler.disable`, so it runs
eagerly and Dynamo never guards on `collector.enabled`.

tcfix should report nothing for TCF202 (and must not add a second decorator).
"""
import torch
from torch import nn


class Collector:
    def __init__(self):
        self.enabled = False
        self.outputs: list[torch.Tensor] = []


def attach(model: nn.Module, collector: Collector):
    @torch.compiler.disable
    def hook(module, inputs, output):
        if collector.enabled:
            collector.outputs.append(output.detach())

    return model.register_forward_hook(hook)
