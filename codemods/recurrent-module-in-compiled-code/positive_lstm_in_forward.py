"""TCF111 positive: an LSTM submodule called from forward breaks the graph at the call."""
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.rnn = nn.LSTM(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.rnn(self.proj(x))
        return self.head(y[:, -1])
