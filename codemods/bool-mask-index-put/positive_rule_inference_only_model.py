"""A model whose forward refuses training (`if self.training: raise ...`), like text-to-speech
flows that only ship inference. Eval mode does not turn grad off: called without
`torch.no_grad()` the values still require grad (the projection's weights do), AOTAutograd still
fails on the backward and the frame runs eagerly (measured under torch 2.15). tcfix reports it,
at low severity, saying that `torch.inference_mode()` around the call is enough."""
import torch
from torch import nn


class Vocoder(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, frames: torch.Tensor, energy: torch.Tensor):
        if self.training:
            raise RuntimeError("this vocoder only runs in inference")
        voiced = energy > 0.1
        out = torch.zeros_like(frames)
        out[voiced] = self.proj(frames[voiced])
        return out
