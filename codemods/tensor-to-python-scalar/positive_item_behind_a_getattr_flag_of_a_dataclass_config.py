"""A sampler reads its switches from a dataclass config, through `getattr` and a string mode:
`bool(getattr(self.config, "reseed", False))` before an early return, and `self.config.schedule
== "cosine"` in a branch. The dataclass leaves `reseed` off and `schedule` at "linear", and no code
of the project sets either, so a run with the default config takes neither path and Dynamo
traces neither `.item()`: each finding stays, low, and names the setting that makes it real."""
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class SamplerConfig:
    width: int = 8
    reseed: bool = False
    schedule: str = "linear"


class Sampler(nn.Module):
    def __init__(self, config: SamplerConfig):
        super().__init__()
        self.config = config
        self.proj = nn.Linear(config.width, config.width)

    def scale_for(self, noise):
        if self.config.schedule == "cosine":
            return float(noise.std().item())
        return 1.0

    def forward(self, noise):
        out = self.proj(noise) * self.scale_for(noise)
        if not bool(getattr(self.config, "reseed", False)):
            return out
        torch.manual_seed(int(noise.abs().sum().item()))
        return out + torch.randn_like(out)
