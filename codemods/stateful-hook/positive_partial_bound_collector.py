"""TCF202 positive: a module-level hook function registered through
`functools.partial(record_output, collector)`; the bound `collector` argument's `flag` is read in the
hook and toggled by the caller.

tcfix should report the read of `collector.flag` and offer `@torch.compiler.disable` above
`def record_output`.
"""
import functools

import torch
from torch import nn


class OutputCollector:
    def __init__(self):
        self.flag = False
        self.outputs: list[torch.Tensor] = []


def record_output(collector: OutputCollector, module: nn.Module, inputs, output: torch.Tensor):
    if collector.flag:
        collector.outputs.append(output.detach().cpu())


def attach(model: nn.Module, collector: OutputCollector):
    return [
        block.register_forward_hook(functools.partial(record_output, collector))
        for block in model.children()
    ]
