"""A running-mean normalizer that counts the batches it has seen (cumulative average)."""
import torch
from torch import nn


class RunningNorm(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("running_mean", torch.zeros(dim), persistent=False)
        self.count = 0  # batches seen

    def forward(self, x):
        if self.training:
            self.count += 1
            self.running_mean = self.running_mean + (x.mean(0).detach() - self.running_mean) / self.count
        return self.proj(x - self.running_mean)
