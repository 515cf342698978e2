"""The module already turns `capture_scalar_outputs` on: the split sizes are not reported, the branch on
`.item()` still is, and its reason says the setting does not help there."""
import torch
from torch import nn

torch._dynamo.config.capture_scalar_outputs = True


class Merger(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, grid_thw: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        pieces = torch.split(h, (grid_thw.prod(-1) // 4).tolist())
        if h.abs().max().item() > 10.0:
            h = h.clamp(-10.0, 10.0)
        return torch.stack([p.sum() for p in pieces]).sum() + h.mean()
