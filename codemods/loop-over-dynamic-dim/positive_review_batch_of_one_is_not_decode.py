"""A recurrent layer with a per-token helper that is only called under a test that a size be 1,
but the size is the batch (`x.shape[0] == 1`, a single-sample path) or the number of beams
(`num_beams == 1`, greedy decoding), not the sequence. The helpers still loop over every token of
the sequence, whose length changes from call to call: each new length unrolls the loop anew.
tcfix: TCF204 in both helpers."""
import torch
from torch import nn


class Scan(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.cell = nn.GRUCell(dim, dim)

    def _scan_one(self, x, h):
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
        return h

    def _scan_greedy(self, x, h):
        steps = x.size(1)
        for t in range(steps):
            h = self.cell(x[:, t], h)
        return h

    def forward(self, x: torch.Tensor, h: torch.Tensor, num_beams: int = 1):
        if x.shape[0] == 1:
            h = self._scan_one(x, h)
        if num_beams == 1:
            h = self._scan_greedy(x, h)
        return h
