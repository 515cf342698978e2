"""TCF202 positive: a hook counts its calls in a `nonlocal` counter (to subsample which activations
it keeps).

Dynamo guards on the cell's value, which changes on every call: a recompile per call until the limit.
tcfix should report the `nonlocal` state and offer `@torch.compiler.disable` above `def hook`.
"""
import torch
from torch import nn


def sample_activations(layer: nn.Module, every: int = 100) -> list[torch.Tensor]:
    samples: list[torch.Tensor] = []
    calls = 0

    def hook(module, inputs, output):
        nonlocal calls
        calls += 1
        if calls % every == 0:
            samples.append(output.detach()[:4].cpu())

    layer.register_forward_hook(hook)
    return samples
