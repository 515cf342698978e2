"""A flow model that refuses training by what its top-level forward raises when given targets
("Training of ... is not supported"), not by `if self.training:`. A spline helper elsewhere in
the file writes through a bool mask. No backward ever runs for training, but eval mode does not
turn grad off: without `torch.no_grad()` the values still require grad (the weights do), and the
frame falls back to eager (measured under torch 2.15: AOTAutograd fails on that graph). tcfix
reports it at low severity, naming the model that refuses training, as for
`positive_rule_inference_only_model.py`."""
import torch
from torch import nn


def _clamped_spline(values: torch.Tensor, bound: float = 1.0):
    outside = (values < -bound) | (values > bound)
    out = torch.zeros_like(values)
    out[outside] = values[outside] * 0.5
    return out


class SplineFlow(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, frames: torch.Tensor):
        return _clamped_spline(frames * self.scale)


class SpeechModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.flow = SplineFlow()

    def forward(self, frames: torch.Tensor, targets=None):
        if targets is not None:
            raise NotImplementedError("Training of SpeechModel is not supported yet.")
        return self.flow(frames)
