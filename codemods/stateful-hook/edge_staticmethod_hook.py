"""TCF202 edge: the hook is a `@staticmethod` registered as `self._hook`; it reads a module-level
switch object (`TRACE.enabled`) that the training script flips.

tcfix should report the read of `TRACE.enabled`. The new decorator must go BELOW `@staticmethod`:
`torch.compiler.disable(staticmethod(f))` returns a plain function, which the class then binds as a
method, so `self._hook` would pass the instance as an extra first argument (TypeError on every call).
"""
import torch
from torch import nn


class TraceSwitch:
    def __init__(self):
        self.enabled = False
        self.shapes: list[torch.Size] = []


TRACE = TraceSwitch()


class Traced(nn.Module):
    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner
        self.inner.register_forward_hook(self._hook)

    @staticmethod
    def _hook(module, inputs, output):
        if TRACE.enabled:
            TRACE.shapes.append(output.shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)
