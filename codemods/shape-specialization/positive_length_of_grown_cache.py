"""A decoder that takes what came before as a tensor and returns it longer; the generation loop
hands each call's result to the next (`out, kept = model(token, kept)`). The length read off it,
`t`, grows by one per call: the first new length compiles a second graph before it is made
dynamic."""
import torch
from torch import nn


class Appender(nn.Module):
    def __init__(self, vocab: int, width: int, longest: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.places = nn.Embedding(longest, width)

    def forward(self, ids, kept):
        t = kept.shape[1]
        h = self.embed(ids) + self.places(torch.arange(t, t + ids.shape[1], device=ids.device))
        return h, torch.cat([kept, h], dim=1)


def generate(model: Appender, ids, steps: int):
    model = torch.compile(model)
    out, kept = model(ids, torch.zeros(ids.shape[0], 0, 8))
    for _ in range(steps):
        out, kept = model(ids[:, -1:], kept)
    return out
