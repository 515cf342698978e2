"""A segmenter that caps how long a segment may be only when it is built with a cap (None by
default). `forward` unpacks the cap together with the input's sizes in one tuple assignment, then
tests it with the file's own None test: the `.item()` under that test runs only when the segmenter
is built with `max_len` set. Measured under torch 2.15 (`backend="eager"`, two calls): built
without a cap, 0 breaks and 1 graph; with `max_len=4`, the graph breaks at the `.item()` (2 graphs).
tcfix: TCF103 on the `.item()`, low, with the condition."""
import torch
from torch import nn


def present(value):
    return value is not None


class Segmenter(nn.Module):
    def __init__(self, dim: int = 8, max_len=None):
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.max_len = max_len

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, dim, max_len = *x.shape, self.max_len
        starts = self.score(x).squeeze(-1) > 0
        if present(max_len):
            longest = starts.sum(dim=-1).amax().item()
            starts = starts | (torch.arange(length, device=x.device) % max_len == 0)
            return starts.float().sum(-1) / max(longest, 1)
        return starts.float().sum(-1)
