"""TCF202 edge: several stateful hooks in one file — a closure hook, a lambda, and a pre-hook.

tcfix should report all three, fix them in one `--apply` (two decorators, one
`torch.compiler.disable(...)` wrap), and a second run should change nothing.
"""
import torch
from torch import nn


class Switches:
    def __init__(self):
        self.record = False
        self.perturb = False
        self.count = False
        self.outputs: list[torch.Tensor] = []
        self.calls = 0


def attach_all(model: nn.Module, switches: Switches):
    def record_hook(module, inputs, output):
        if switches.record:
            switches.outputs.append(output.detach())

    def perturb_pre_hook(module, args):
        if switches.perturb:
            return tuple(a + 1e-3 * torch.randn_like(a) for a in args)
        return None

    model.register_forward_hook(record_hook)
    model.register_forward_pre_hook(perturb_pre_hook)
    model.register_forward_hook(lambda m, i, o: setattr(switches, "calls", switches.calls + 1) if switches.count else None)
