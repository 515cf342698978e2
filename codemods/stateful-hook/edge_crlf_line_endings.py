"""TCF202 edge: CRLF line endings (a file checked out on Windows).

tcfix should report the read of `collector.enabled` and insert `@torch.compiler.disable` with a CRLF
line ending like its neighbours; no bare LF may appear in the fixed file.
"""
import torch
from torch import nn


class Collector:
    def __init__(self):
        self.enabled = False
        self.outputs = []


def attach(model: nn.Module, collector: Collector):
    def hook(module, inputs, output):
        if collector.enabled:
            collector.outputs.append(output.detach())

    return model.register_forward_hook(hook)
