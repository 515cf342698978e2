import torch
from torch import nn


def detect_overflow(var, ctx):
    """Trimmed from transformers' debug_utils.detect_overflow: the `if 0:` blocks are switched-off
    diagnostics. CPython drops them from the bytecode, so Dynamo never sees the prints."""
    detected = torch.isinf(var).any()

    # if needed to monitor large elements can enable the following
    if 0:  # and detected:
        n100 = var[torch.ge(var.abs(), 100)]
        if n100.numel() > 0:
            print(f"{ctx}:  n100={n100.numel()}")

    if 0:
        print(f"min={var.min():9.2e} max={var.max():9.2e}")

    if False:
        print(f"mean={var.mean():9.2e} ({ctx})")
    else:
        detected = detected | torch.isnan(var).any()

    return detected


class Checked(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        out = self.proj(x)
        return out, detect_overflow(out, "proj")
