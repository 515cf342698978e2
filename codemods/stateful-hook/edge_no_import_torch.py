"""TCF202 edge: the file imports only `torch.nn as nn`, which does not bind the name `torch`.

tcfix should report the read of `collector.enabled` and, for its `@torch.compiler.disable` fix, add
`import torch` (after the module docstring) so the fixed file still imports and runs.
"""
import torch.nn as nn


class Collector:
    def __init__(self):
        self.enabled = False
        self.outputs = []


def attach(model: nn.Module, collector: Collector):
    def hook(module, inputs, output):
        if collector.enabled:
            collector.outputs.append(output.detach())

    return model.register_forward_hook(hook)
