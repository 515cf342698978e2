"""TCF202 positive: a hook factory `make_hook(name)` returns a nested `hook`, registered in a loop;
the hook reads `DEBUG.check_activations` on a module-level config object that the command line (or a
debugger) changes at run time.

tcfix should report the read of `DEBUG.check_activations` and offer `@torch.compiler.disable` above the
nested `def hook`.
"""
import torch
from torch import nn


class DebugConfig:
    check_activations = False
    max_abs = 1e4


DEBUG = DebugConfig()


def make_hook(name: str):
    def hook(module, inputs, output):
        if DEBUG.check_activations:
            bad = ~torch.isfinite(output) | (output.abs() > DEBUG.max_abs)
            torch._assert_async(~bad.any(), f"bad activation in {name}")
        return output

    return hook


def register_debug_hooks(model: nn.Module) -> None:
    for name, module in model.named_modules():
        if isinstance(module, (nn.Linear, nn.LayerNorm)):
            module.register_forward_hook(make_hook(name))
