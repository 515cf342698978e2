"""TCF202 positive: an evaluation helper defines a hook that tags each output of one layer with
the step it belongs to, registers it once, then runs the model and bumps `step` after each batch:
a binding that runs after the hook is made. Dynamo guards on the cell's value, so every step
compiles the frame again (measured under torch 2.15 with the hook on the first layer of a compiled
two-layer model: 5 graphs for 5 steps; with `@torch.compiler.disable` on the hook, 2 graphs around
its break, compiled once, the same records).

The hook is registered once, on the layer passed in: tcfix should report the read of `step` and
offer `@torch.compiler.disable` above the nested `def record`.
"""
import torch
from torch import nn


def collect_outputs(model: nn.Module, layer: nn.Module, batches, into: list):
    step = 0

    def record(mod, inputs, output):
        into.append((step, output.detach()))

    handle = layer.register_forward_hook(record)
    with torch.no_grad():
        for batch in batches:
            model(batch)
            step += 1
    handle.remove()
