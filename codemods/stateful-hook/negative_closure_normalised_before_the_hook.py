"""TCF202 negative: a hook-installing helper normalises its argument before it defines the hook
(`if not isinstance(allowed, set): allowed = {allowed}`), the shape of a test helper that checks
the dtypes a module sees. The name is bound twice, but both bindings run before the `def`: the
hook's cell holds one value for as long as the hook exists, so Dynamo's guard on it never fails.
Measured under torch 2.15 (inference and a training step): 1 graph, no recompile, no break; the
`torch.compiler.disable` tcfix used to add here made it 2 graphs with a break.

tcfix should report nothing for TCF202.
"""
import torch
from torch import nn


def expect_input_dtypes(module: nn.Module, allowed=None):
    if allowed is None:
        allowed = torch.float32
    if not isinstance(allowed, set):
        allowed = {allowed}

    def check(mod, inputs):
        seen = {t.dtype for t in inputs if isinstance(t, torch.Tensor)}
        assert seen <= allowed, f"{type(mod).__name__} got {seen}, expected {allowed}"

    return module.register_forward_pre_hook(check)
