"""TCF205 negative, trimmed from timm 1.0.31: the list's length is fixed by the model, not by the
data. SelecSlsBlock only asserts on it (an assert is a check, not a shape), and
FeatureDictNet._collect rebinds `x` to a module's output before concatenating it."""
from typing import List

import torch
from torch import nn


class SelecSlsBlock(nn.Module):
    def __init__(self, chs: int):
        super().__init__()
        self.conv1 = nn.Conv2d(chs, chs, 3, padding=1)

    def forward(self, x: List[torch.Tensor]) -> List[torch.Tensor]:
        if not isinstance(x, list):
            x = [x]
        assert len(x) in [1, 2]
        return [self.conv1(x[0])]


class FeatureDictNet(nn.Module):
    def __init__(self, chs: int):
        super().__init__()
        self.stages = nn.ModuleDict({"a": nn.Conv2d(chs, chs, 1), "b": nn.Conv2d(chs, chs, 1)})
        self.concat = True

    def _collect(self, x):
        out = {}
        for name, module in self.stages.items():
            x = module(x)
            if isinstance(x, (tuple, list)):
                out[name] = torch.cat(x, 1) if self.concat else x[0]
            else:
                out[name] = x
        return out

    def forward(self, x):
        return self._collect(x)
