"""TCF111 positive: a GRU applied in a loop of forward (critical: the whole forward runs eagerly),
and one imported by name from torch.nn, called from a helper forward uses."""
import torch
from torch import nn
from torch.nn import RNN


class Refiner(nn.Module):
    def __init__(self, dim: int = 8, steps: int = 3):
        super().__init__()
        self.steps = steps
        self.gru = nn.GRU(dim, dim, batch_first=True)
        self.summary = RNN(dim, dim, batch_first=True)

    def summarise(self, x):
        out, _ = self.summary(x)
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.steps):
            x, _ = self.gru(x)
        return self.summarise(x)
