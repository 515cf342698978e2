"""A block that checks its activations for NaN and inf and says so. The prints run only when a
value is NaN or inf: an anomaly report, which a normal call never reaches (like an `except`
handler). The tests themselves convert tensor data to Python and break the graph on every call:
those are reported; the prints under them are not."""
import torch
from torch import nn


def report_non_finite(values, where):
    found = False
    if torch.isnan(values).any().item():
        found = True
        print(f"{where}: NaN")
    if torch.isinf(values).any().item():
        found = True
        print(f"{where}: inf")
    return found


class CheckedBlock(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor):
        y = self.proj(x)
        if y.dtype == torch.float16 and not torch.isfinite(y).all():
            print("clamping fp16 overflow")
            y = y.clamp(-6e4, 6e4)
        report_non_finite(y, "proj")
        return y
