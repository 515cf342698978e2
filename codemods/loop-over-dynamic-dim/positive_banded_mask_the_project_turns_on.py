"""The banded-mask flag of the config-window fixture, where something besides the config test can
turn it on: the project builds a config with a window, a method or a helper turns the flag on, or
the store sits in the `else` of the config test. Each loop is one the project's own models may
trace: the findings stay medium, with no condition."""
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class TinyConfig:
    width: int = 16
    window: int | None = None
    stripe: int | None = None
    dilation: int | None = None
    full_attention: bool = True


def windowed_config() -> TinyConfig:
    return TinyConfig(window=4)


class SetByTheProject(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.proj = nn.Linear(config.width, config.width)
        self.banded = False
        if config.window is not None:
            self.banded = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.banded:
            for row in range(x.shape[1]):
                x[:, row] = self.proj(x[:, row])
        return x


class TurnedOnByAMethod(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.proj = nn.Linear(config.width, config.width)
        self.striped = False
        if config.stripe is not None:
            self.striped = True

    def use_stripes(self) -> None:
        self.striped = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.striped:
            for row in range(x.shape[1]):
                x[:, row] = self.proj(x[:, row])
        return x


class TurnedOnByAHelper(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.proj = nn.Linear(config.width, config.width)
        self.dilated = False
        if config.dilation is not None:
            self.dilated = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.dilated:
            for row in range(x.shape[1]):
                x[:, row] = self.proj(x[:, row])
        return x


def dilate_everything(model: nn.Module) -> None:
    for module in model.modules():
        module.dilated = True


class TurnedOnInTheElse(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.proj = nn.Linear(config.width, config.width)
        self.local = False
        if config.full_attention:
            self.proj.requires_grad_(True)
        else:
            self.local = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.local:
            for row in range(x.shape[1]):
                x[:, row] = self.proj(x[:, row])
        return x
