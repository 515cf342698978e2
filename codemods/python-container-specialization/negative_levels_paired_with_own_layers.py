"""A neck that projects each feature level of a backbone with its own layer. The list of levels
pairs position by position with the neck's own layers (`self.proj[i]`, `self.upsample[i]`): its
length is the model's number of levels, fixed when the model is built, not a property of the data.
Measured under torch 2.15 (`backend="eager"`, the whole model compiled, three image sizes): 2 graphs
(the second from automatic dynamic shapes), 0 breaks, no recompile for the list's length.
tcfix: nothing."""
import torch
from torch import nn


class LevelNeck(nn.Module):
    def __init__(self, dim: int = 8, widths=(4, 8, 16)):
        super().__init__()
        self.proj = nn.ModuleList([nn.Conv2d(dim, width, 1) for width in widths])
        self.upsample = nn.ModuleList([nn.Upsample(scale_factor=2 ** i) for i in range(len(widths))])

    def forward(self, levels):
        assert isinstance(levels, list)
        out = []
        for i, level in enumerate(levels):
            out.append(self.upsample[i](self.proj[i](level)))
        return out


class Detector(nn.Module):
    def __init__(self, dim: int = 8, depth: int = 3):
        super().__init__()
        self.stages = nn.ModuleList([nn.Conv2d(3 if i == 0 else dim, dim, 3, stride=2, padding=1) for i in range(depth)])
        self.neck = LevelNeck(dim)

    def forward(self, image: torch.Tensor):
        levels = []
        x = image
        for stage in self.stages:
            x = stage(x)
            levels.append(x)
        return [level.mean() for level in self.neck(levels)]
