"""TCF202 positive: a module registers its own method `self._hook` on its blocks; the hook reads
`self.capture`, which `enable_capture()` / `disable_capture()` change.

Dynamo guards on `capture`; each toggle recompiles. tcfix should report the read of `self.capture` and
offer `@torch.compiler.disable` above `def _hook`.
"""
import torch
from torch import nn


class FeatureExtractorNet(nn.Module):
    def __init__(self, dim: int = 128, depth: int = 4):
        super().__init__()
        self.stem = nn.Linear(32, dim)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU()) for _ in range(depth))
        self.head = nn.Linear(dim, 10)
        self.capture = False
        self.features: list[torch.Tensor] = []
        self.blocks[-1].register_forward_hook(self._hook)

    def enable_capture(self) -> None:
        self.features.clear()
        self.capture = True

    def disable_capture(self) -> None:
        self.capture = False

    def _hook(self, module, inputs, output):
        if self.capture:
            self.features.append(output.detach())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        x = self.blocks[0](x)
        x = self.blocks[1](x)
        x = self.blocks[2](x)
        x = self.blocks[3](x)
        return self.head(x)
