"""TCF202 negative: the hook reads a closure variable holding a plain constant that is never
reassigned (`scale = 0.5`). Dynamo guards on it, but it never changes, so it never recompiles.

tcfix should report nothing for TCF202.
"""
import torch
from torch import nn


def damp_residual(block: nn.Module, depth: int):
    scale = 0.5 / depth

    def hook(module, inputs, out):
        return out * scale

    return block.register_forward_hook(hook)
