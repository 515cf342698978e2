"""TCF202 edge: the module imports `from torch import nn` at the top and `import torch` only inside a
function, so `torch` is not bound at module level where the hook is defined.

tcfix should report the read of `SETTINGS["trace"]`. Its `@torch.compiler.disable` decorator is
evaluated at import time, so the fix must also add a module-level `import torch` (otherwise:
NameError when the module is imported).
"""
from torch import nn

SETTINGS = {"trace": False}


def trace_hook(module: nn.Module, inputs, output):
    if SETTINGS["trace"]:
        return output.clone()
    return output


def install(model: nn.Module):
    import torch

    torch.set_printoptions(precision=3)
    for m in model.modules():
        m.register_forward_hook(trace_hook)


def enable_tracing(on: bool = True):
    SETTINGS["trace"] = on
