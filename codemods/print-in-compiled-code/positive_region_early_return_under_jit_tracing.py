# `torch.jit.is_tracing()` is TorchScript's question and is false under Dynamo: the early return
# is not taken under torch.compile, and the print after it is traced.
# tcfix: TCF101 on the print.
import torch
from torch import nn


class Resize(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.jit.is_tracing():
            return x
        print("resizing", x.shape)
        return torch.nn.functional.interpolate(x, scale_factor=2.0)
