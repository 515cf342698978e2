"""TCF202 negative: the hook reads an attribute of a frozen dataclass captured in a closure
(`cfg.scale`). The object cannot change after construction, so Dynamo's guard on it never fails.
Disabling this hook would only add a graph break per call (in the blocks loop: the whole forward
frame would run eagerly).

tcfix should report nothing for TCF202.
"""
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class ResidualScaling:
    scale: float = 0.5
    clamp: float = 30.0


def attach_residual_scaling(blocks: nn.ModuleList, cfg: ResidualScaling):
    def hook(module, inputs, output):
        return torch.clamp(output * cfg.scale, -cfg.clamp, cfg.clamp)

    return [blk.register_forward_hook(hook) for blk in blocks]
