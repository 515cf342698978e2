"""A warning behind a switch `__init__` sets to a literal False that nothing in this file turns on
(gradient checkpointing, enabled by a library call users make before training, in another file).
Built as it is, the model never takes the branch: the finding stays, low, and names the switch.
A switch the file's own code turns on (`__init__`'s tail, or a helper setting it on a model) is
part of its normal use: high. A `setattr` with a computed name turns on only names of its shape
(`f"{kind}_inv_freq"`): the checkpointing switch stays a switch."""
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Decoder(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.layer = nn.Linear(dim, dim)
        self.gradient_checkpointing = False

    def forward(self, x: torch.Tensor, use_cache: bool = True) -> torch.Tensor:
        if self.gradient_checkpointing and self.training:
            if use_cache:
                logger.warning("use_cache=True is incompatible with gradient checkpointing")
        return self.layer(x)


class Rotary(nn.Module):
    def __init__(self, kinds=("global", "local"), dim: int = 8):
        super().__init__()
        for kind in kinds:
            setattr(self, f"{kind}_inv_freq", torch.ones(dim))


class AlwaysCheckpointed(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.layer = nn.Linear(dim, dim)
        self.checkpointing = False
        self.checkpointing = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.checkpointing:
            logger.warning("checkpointing")
        return self.layer(x)


class Sampler(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.layer = nn.Linear(dim, dim)
        self.verbose = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.verbose:
            logger.info("sampling")
        return self.layer(x)


def make_verbose(model: nn.Module) -> None:
    for module in model.modules():
        if isinstance(module, Sampler):
            module.verbose = True
