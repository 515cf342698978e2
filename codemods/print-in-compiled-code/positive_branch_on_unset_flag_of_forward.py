"""A branch on a flag argument of `forward` that a plain call leaves unset: `use_cache` defaults to
`None` and nothing fills it, so `model(ids, labels=labels)` never warns. The finding stays, low,
and says which call makes it real. It stays high where something does set the flag: the function
itself (`use_cache = ... self.config.use_cache`), a decorator tcfix does not know (it may fill
arguments from the config), a parent module that passes `use_cache=True`, one that passes on
its own flag after assigning it, or the module's own decoding loop (`self(x, use_cache=True)`). A submodule given its parent's unset flag as it came
(`Wrapper` to `Inner`) is unset too. A data argument's `is not None` test (`labels`) is the
training path: no condition there."""
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


def fill_from_config(forward):
    def wrapper(self, *args, **kwargs):
        kwargs.setdefault("use_cache", self.config.use_cache)
        return forward(self, *args, **kwargs)

    return wrapper


class Decoder(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, hidden: torch.Tensor, use_cache: bool = False) -> torch.Tensor:
        if use_cache:
            logger.warning("the decoder keeps no cache")
        return self.proj(hidden)


class Seq2Seq(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.decoder = Decoder(dim)

    def forward(self, hidden, labels=None, use_cache: bool | None = None, return_loss=False):
        if labels is not None:
            print("training step")
            if use_cache:
                logger.warning("`use_cache` is turned off when `labels` are given")
            use_cache = False
        if not return_loss:
            pass
        else:
            print("computing the loss")
        return self.decoder(hidden, use_cache=use_cache)


class CachedDecoder(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, hidden: torch.Tensor, use_cache: bool = False) -> torch.Tensor:
        if use_cache:
            print("caching")
        return self.proj(hidden)


class Generator(nn.Module):
    def __init__(self, dim: int, use_cache: bool = True):
        super().__init__()
        self.decoder = CachedDecoder(dim)
        self.use_cache = use_cache

    def forward(self, hidden, use_cache=None):
        use_cache = use_cache if use_cache is not None else self.use_cache
        if use_cache:
            print("generating with a cache")
        return self.decoder(hidden, use_cache=True)


class FilledByDecorator(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config

    @fill_from_config
    def forward(self, hidden, use_cache=None):
        if use_cache:
            print("cache from the config")
        return hidden


class Inner(nn.Module):
    def forward(self, hidden: torch.Tensor, use_cache: bool | None = None) -> torch.Tensor:
        if use_cache:
            print("inner cache")
        return hidden


class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, hidden, use_cache: bool | None = None):
        return self.inner(hidden, use_cache=use_cache)


class Decoding(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, hidden, use_cache: bool | None = None):
        if use_cache:
            print("decoding step with a cache")
        return self.proj(hidden)

    def decode(self, hidden, steps: int):
        for _ in range(steps):
            hidden = self(hidden, use_cache=True)
        return hidden
