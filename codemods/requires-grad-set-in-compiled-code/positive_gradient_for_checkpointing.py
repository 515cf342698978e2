"""TCF112 positive: the encoder makes its input require grad so that checkpointing has a graph to
replay; under compile the store breaks the graph (measured under torch 2.15, inference and
training)."""
import torch
from torch import nn


class ConvEncoder(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.conv = nn.Conv1d(1, dim, 3)
        self.checkpointing = True

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        h = waveform[:, None]
        if self.checkpointing and self.training:
            h.requires_grad = True
        return self.conv(h)
