# `torch._check` of a size is a hint Dynamo traces (no tensor is read), and a tensor check that
# runs only eagerly, under `if not torch.compiler.is_compiling():`, is never traced.
# tcfix: no TCF103 finding.
import torch
from torch import nn


class RowNorm(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch._check(x.shape[0] > 0, lambda: "empty batch")
        if not torch.compiler.is_compiling():
            torch._check_tensor_all(torch.isfinite(x))
        return x / x.norm(dim=-1, keepdim=True)
