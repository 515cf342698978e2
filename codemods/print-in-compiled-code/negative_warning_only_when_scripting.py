"""TCF101 negative: `torch.jit.is_scripting()` and `torch.jit.is_tracing()` are False under Dynamo,
so what they guard never runs compiled (measured under torch 2.15: 0 breaks). The `else` of
`if not torch.jit.is_scripting():` is TorchScript's too."""
import warnings

import torch
from torch import nn


class Detector(nn.Module):
    def __init__(self, dim: int = 4):
        super().__init__()
        self.head = nn.Linear(dim, dim)
        self._has_warned = False

    def forward(self, x: torch.Tensor):
        out = self.head(x)
        if torch.jit.is_scripting():
            if not self._has_warned:
                warnings.warn("scripted detectors always return a tuple")
                self._has_warned = True
            return out, out
        if not torch.jit.is_tracing():
            out = out * 2
        else:
            print("traced by torch.jit")
        return out
