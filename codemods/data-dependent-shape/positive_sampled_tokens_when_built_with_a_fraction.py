"""A branch on a constructor number that its default turns off: the quantizer samples a random
fraction of the tokens (a boolean-mask index, whose shape depends on tensor values) only when it
is built with `sample_fraction < 1.0`; built as its defaults say, Dynamo never traces it. The
finding stays, low, and says which construction makes it real. `self.temperature > 0.5` with a
default of 1.0 holds by default: no condition there."""
import torch
from torch import nn


class EntropyQuantizer(nn.Module):
    def __init__(self, dim: int = 16, codes: int = 64, sample_fraction: float = 1.0, temperature: float = 1.0):
        super().__init__()
        self.codebook = nn.Parameter(torch.randn(codes, dim))
        self.sample_fraction = sample_fraction
        self.temperature = temperature

    def forward(self, x):
        flat = x.reshape(-1, x.shape[-1])
        if self.sample_fraction < 1.0:
            keep = torch.rand(flat.shape[0], device=flat.device) < self.sample_fraction
            flat = flat[keep]
        if self.temperature > 0.5:
            picked = flat[flat.sum(-1) > 0]
            flat = picked
        logits = flat @ self.codebook.t()
        return logits.softmax(-1).mean()


model = torch.compile(EntropyQuantizer())
