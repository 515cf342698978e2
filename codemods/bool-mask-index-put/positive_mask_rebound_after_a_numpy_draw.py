"""Masking frames for augmentation while training: the mask name is first bound to a numpy array a
helper draws, then rebound to a bool tensor right before the write. The binding that reaches the
write makes it a mask, whatever the name held before. In training the write's backward needs
`nonzero`, AOTAutograd fails on it, and the frame falls back to eager."""
import numpy as np
import torch
from torch import nn


def draw_spans(shape, probability):
    return np.random.rand(*shape) < probability


class FrameMasker(nn.Module):
    def __init__(self, dim: int = 8, probability: float = 0.1):
        super().__init__()
        self.probability = probability
        self.filler = nn.Parameter(torch.randn(dim))

    def mask_frames(self, frames: torch.Tensor, spans=None):
        batch, length, _ = frames.shape
        if spans is None and self.training:
            spans = draw_spans((batch, length), self.probability)
            spans = torch.tensor(spans, device=frames.device, dtype=torch.bool)
            frames[spans] = self.filler.to(frames.dtype)
        return frames

    def forward(self, frames: torch.Tensor):
        return self.mask_frames(frames * 2)
