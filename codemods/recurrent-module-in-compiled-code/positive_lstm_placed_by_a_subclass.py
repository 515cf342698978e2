"""A 2-D sequence mixer whose base class holds identity placeholders and calls them in its
`forward`; a subclass in the same file replaces them with `nn.LSTM`. The subclass runs the base's
`forward`, so the call there reaches an LSTM: the graph breaks at each call (measured under torch
2.15, inference: 2 graph breaks per forward; timm's Sequencer2d is laid out like this)."""
import torch
from torch import nn


class Passthrough(nn.Module):
    def forward(self, x: torch.Tensor):
        return x, None


class Mixer2dBase(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.vertical = Passthrough()
        self.horizontal = Passthrough()
        self.proj = nn.Linear(4 * hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, height, width, channels = x.shape
        v = x.permute(0, 2, 1, 3).reshape(-1, height, channels)
        v, _ = self.vertical(v)
        v = v.reshape(batch, width, height, -1).permute(0, 2, 1, 3)
        h = x.reshape(-1, width, channels)
        h, _ = self.horizontal(h)
        h = h.reshape(batch, height, width, -1)
        return self.proj(torch.cat([v, h], dim=-1))


class LstmMixer2d(Mixer2dBase):
    def __init__(self, dim: int = 8, hidden: int = 4):
        super().__init__(dim, hidden)
        self.vertical = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.horizontal = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
