"""TCF201 edge: module classes nested in another class and in a factory function, each with a lazily
grown table and a `max_len` parameter.

tcfix should report both growths and insert each `self._grow(max_len)` at the end of the right
`__init__`, indented for its nesting depth.
"""
import torch
from torch import nn


class Transformer(nn.Module):
    class LearnedPositions(nn.Module):
        def __init__(self, d_model: int, max_len: int = 512):
            super().__init__()
            self.d_model = d_model
            self.register_buffer("table", torch.empty(0, d_model), persistent=False)

        def _grow(self, length: int) -> None:
            if self.table.size(0) < length:
                extra = torch.zeros(length - self.table.size(0), self.d_model, device=self.table.device)
                self.table = torch.cat((self.table, extra), dim=0)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self._grow(x.size(1))
            return x + self.table[: x.size(1)]

    def __init__(self, d_model: int = 64, max_len: int = 512):
        super().__init__()
        self.positions = Transformer.LearnedPositions(d_model, max_len)
        self.layer = nn.TransformerEncoderLayer(d_model, nhead=4, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(self.positions(x))


def make_time_embedding(d_model: int):
    class TimeEmbedding(nn.Module):
        def __init__(self, max_len: int = 1000):
            super().__init__()
            self.register_buffer("freqs", torch.zeros((0, d_model)), persistent=False)

        def _grow(self, length: int) -> None:
            if self.freqs.size(0) < length:
                t = torch.arange(length, dtype=torch.float32, device=self.freqs.device)[:, None]
                self.freqs = torch.sin(t / 10000 ** (torch.arange(d_model, device=self.freqs.device) / d_model))

        def forward(self, steps: torch.Tensor) -> torch.Tensor:
            self._grow(int(steps.max()) + 1)
            return self.freqs[steps]

    return TimeEmbedding()
