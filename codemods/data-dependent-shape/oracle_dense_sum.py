"""Oracle fixture for data-dependent-shape (TCF106): selections that only feed a sum or a mean.

A loss module in the style of FastSpeech2's and SpeechT5's: a weighted loss summed over the frames a
padding mask keeps (`masked_select(mask).sum()`, the mask broadcast over the channels), a mean over
the finite entries (`torch.mean(err[torch.isfinite(err)])`), and a count-weighted sum over positive
scores (`scores[scores > 0].sum()`). Each selection is a graph break (GB0036). tcfix rewrites each
to a dense form through `torch.where(mask, x, 0)` (the mean as that sum over `mask.sum()`): no break,
one graph, outputs and gradients equal to the original's eager ones up to float rounding (the sums
run over every element, in another order: the fix is unsafe for that reason).
"""
import torch
from torch import nn


class MaskedLoss(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.score = nn.Linear(dim, 1)

    def forward(self, frames: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        predicted = self.proj(frames)
        weights = mask.float() / mask.sum(dim=1, keepdim=True).float()
        l1 = (predicted - targets).abs().mul(weights.unsqueeze(-1))
        l1_loss = l1.masked_select(mask.unsqueeze(-1)).sum()
        err = torch.log(predicted.abs()) * mask.unsqueeze(-1)
        finite_loss = torch.mean(err[torch.isfinite(err)])
        scores = self.score(predicted).squeeze(-1)
        positive = scores[scores > 0].sum()
        return l1_loss + torch.nan_to_num(finite_loss) + positive


def oracle_cases():
    masks = [torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]]).bool(), torch.tensor([[1, 1, 1, 1], [1, 0, 0, 0]]).bool()]
    steps = [(torch.randn(2, 4, 8), torch.randn(2, 4, 8), mask) for mask in masks]
    expect = {"graph_breaks": (">=3", 0), "graphs": (">1", 1), "eager_frames": (0, 0)}
    return [
        {
            "name": "inference",
            "factory": lambda: MaskedLoss().eval(),
            "inputs": steps,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": expect,
        },
        {
            "name": "training",
            "factory": MaskedLoss,
            "inputs": steps,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": expect,
        },
    ]
