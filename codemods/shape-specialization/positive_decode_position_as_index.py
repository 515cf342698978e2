"""A ring of past keys written one decode step at a time, at the step's position used as a plain
index. Dynamo guards on the int's value when it indexes a tensor, with `dynamic=True` too: every
new position compiles another graph, and after 8 the frame runs eagerly (measured under torch
2.15: 8 graphs then eager for 10 positions; as a slice `[start_pos:start_pos + 1]`, 2 graphs and
1 with `dynamic=True`)."""
import torch
from torch import nn


class RingCache(nn.Module):
    def __init__(self, width: int, slots: int = 64):
        super().__init__()
        self.key = nn.Linear(width, width)
        self.register_buffer("keys", torch.zeros(1, slots, width))

    def forward(self, x: torch.Tensor, start_pos: int) -> torch.Tensor:
        self.keys[:, start_pos] = self.key(x[:, -1])
        return self.keys.sum(dim=1)
