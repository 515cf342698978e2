"""The same sampler, where the project's own code turns both switches on: a builder passes
`SamplerConfig(reseed=True)` and a helper sets `config.schedule = "cosine"`. Those paths are
part of how the project runs, so the `.item()` calls are reported as they are, with no
condition."""
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class SamplerConfig:
    width: int = 8
    reseed: bool = False
    schedule: str = "linear"


def reseeding_sampler():
    return Sampler(SamplerConfig(reseed=True))


def use_cosine(config):
    config.schedule = "cosine"
    return config


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
