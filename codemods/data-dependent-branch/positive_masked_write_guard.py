"""`if m.any(): x[m] = <number>` guards a write that does nothing on an all-False mask: the test goes
(`m.any()` and `torch.any(m)`, a Python part kept). Kept: `.all()` (the guard stops writes), a tensor
of values (its length must match the True elements), another mask than the one tested, a target
reached through a call."""
import torch
from torch import nn


class Contrastive(nn.Module):
    def forward(self, logits: torch.Tensor, quantized: torch.Tensor, negatives: torch.Tensor, scores: torch.Tensor):
        neg_is_pos = (quantized == negatives).all(-1)
        if neg_is_pos.any():
            logits[1:][neg_is_pos] = float("-inf")
        padded = scores < 0
        if torch.any(padded):
            scores[padded] = torch.finfo(scores.dtype).min
        if scores.dim() == 2 and padded.any():
            scores[padded] = -1e4
        return logits, scores


class Kept(nn.Module):
    def forward(self, logits: torch.Tensor, values: torch.Tensor, other: torch.Tensor):
        mask = logits > 0
        if mask.all():
            logits[mask] = 0.0
        if mask.any():
            logits[mask] = values
        if mask.any():
            logits[other > 0] = 0.0
        if mask.any():
            self.buffer_of(logits)[mask] = 0.0
        return logits

    def buffer_of(self, logits):
        return logits
