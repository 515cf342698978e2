"""CRLF line endings: a raise under a Python part becomes `torch._assert_async` and the fp16 clamp
keeps its Python part; the line endings stay CRLF."""
import torch
from torch import nn


class Head(nn.Module):
    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        if labels is not None and (labels < 0).any():
            raise ValueError(
                "negative labels: "
                "use -100 to ignore a position"
            )
        if x.dtype == torch.float16 and not torch.isfinite(x).all():
            clamp_value = torch.finfo(x.dtype).max - 1000
            x = torch.clamp(x, min=-clamp_value, max=clamp_value)
        return x
