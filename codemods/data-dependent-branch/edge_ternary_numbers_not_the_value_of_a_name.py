"""Ternaries on a 0-d tensor between two numbers that are not the whole value of one name: inside
arithmetic, returned, assigned to two names, or tested by an `elif` after a body that assigns. The
`torch.where` fix is offered only for `name = a if t else b` (`mscale`, after the `elif`), so none
of the others gets one."""
import torch
from torch import nn


class Scaled(nn.Module):
    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        seq_len = torch.max(position_ids) + 1
        scale = (1.25 if seq_len > 8 else 1.0) * 2.0
        low = high = 0.5 if seq_len > 4 else 0.25
        if x.dim() > 3:
            shift = 1.0
        elif 1.0 if seq_len > 2 else 0.0:
            shift = 2.0
        mscale = 1.5 if seq_len > 32 else 1.0
        return x * scale * mscale + low + high + self.factor(position_ids)

    def factor(self, position_ids: torch.Tensor) -> float:
        seq_len = torch.max(position_ids) + 1
        return 2.0 if seq_len > 16 else 1.0
