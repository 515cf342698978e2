"""TCF202 positive: the hook reads a class attribute used as a global switch (`Probe.enabled`), which
the classmethod `Probe.toggle()` flips.

Dynamo guards on the class attribute like on any other global state; each toggle recompiles. tcfix
should report the read of `Probe.enabled` and offer `@torch.compiler.disable` above `def probe_hook`.
"""
import torch
from torch import nn


class Probe:
    enabled = False
    seen: list[torch.Size] = []

    @classmethod
    def toggle(cls) -> None:
        cls.enabled = not cls.enabled


def probe_hook(module: nn.Module, inputs, output: torch.Tensor):
    if Probe.enabled:
        Probe.seen.append(output.shape)


def attach(model: nn.Module):
    for block in model.children():
        block.register_forward_hook(probe_hook)
