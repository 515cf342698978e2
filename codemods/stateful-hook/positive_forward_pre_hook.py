"""TCF202 positive: a forward pre-hook adds input noise while `noise.active` is set (a schedule turns
it off after warm-up).

Dynamo traces pre-hooks with the module and guards on `noise.active` (and `noise.std`): each change
recompiles. tcfix should report the read and offer `@torch.compiler.disable` above `def add_noise`.
"""
import torch
from torch import nn


class NoiseSchedule:
    def __init__(self, std: float = 0.1):
        self.active = True
        self.std = std

    def step(self, epoch: int) -> None:
        self.active = epoch < 5
        self.std = 0.1 * (0.5 ** epoch)


def add_input_noise(encoder: nn.Module, noise: NoiseSchedule):
    def add_noise(module, args):
        (x,) = args
        if noise.active:
            return (x + noise.std * torch.randn_like(x),)
        return None

    return encoder.register_forward_pre_hook(add_noise)
