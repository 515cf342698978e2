"""CRLF line endings; several findings; `import torch as th`."""
import torch as th
from torch import nn


class Select(nn.Module):
    def forward(self, x: th.Tensor) -> th.Tensor:
        idx = x.nonzero(as_tuple=True)
        where = th.where(x > 0)
        return x[x > 0].sum() + idx[0].numel() + where[0].numel()
