"""The module turns `capture_scalar_outputs` on (through `import torch._dynamo as dynamo`): the split
sizes, the slice bound and the `arange` length trace as unbacked symbols, so nothing is reported."""
import torch
import torch._dynamo as dynamo
from torch import nn

dynamo.config.capture_scalar_outputs = True


class Merger(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, grid_thw: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        pieces = torch.split(h, (grid_thw.prod(-1) // 4).tolist())
        kept = int(mask.sum().item())
        positions = torch.arange(mask.sum(-1).max().item())
        return torch.stack([p.sum() for p in pieces]).sum() + h[:kept].mean() + positions.sum()
