"""Evidence from the project's own calls, under names that say nothing: the script compiles the
scorer and calls it once per step of a `range` loop, passing the counter `i`, and a compiled
`step` function whose `n` the loop advances by each chunk's length (`n += chunk.shape[1]`).
Each new value compiles a second graph before Dynamo makes it dynamic (measured under torch 2.15:
2 graphs over 10 values, 1 with `dynamic=True`)."""
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x, i):
        where = torch.arange(i, i + x.shape[1], device=x.device)
        return self.proj(x) * where[None, :, None]


@torch.compile
def step(chunk, n):
    return chunk * torch.arange(n, n + chunk.shape[1])[None, :, None]


def run(tokens, width: int):
    scorer = torch.compile(Scorer(width))
    for i in range(4, 4 + tokens.shape[1]):
        scorer(tokens[:, i - 4 : i - 3], i)
    n = 0
    for chunk in tokens.split(3, dim=1):
        step(chunk, n)
        n += chunk.shape[1]
