"""Masked writes of tensor values where no grad flows, so AOTAutograd builds no backward and the
frame compiles (measured under torch 2.15 with `aot_eager` and `inductor`: one graph, no
fallback). The shapes stand for a detection loss that builds its regression targets under
`torch.no_grad()` in a helper, a sampler decorated `@torch.inference_mode()`, a target encoder
fed detached features, and a `with torch.no_grad():` block inside forward."""
import torch
from torch import nn


def soft_targets(points: torch.Tensor, limits: torch.Tensor):
    weights = torch.zeros_like(points)
    inside = (points >= 0) & (points < limits)
    weights[inside] = points[inside] / limits[inside]
    return weights


class BoxLoss(nn.Module):
    def forward(self, pred: torch.Tensor, points: torch.Tensor, limits: torch.Tensor):
        with torch.no_grad():
            targets = soft_targets(points, limits)
        return (pred - targets).abs().mean()


class Sampler(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    @torch.inference_mode()
    def forward(self, x: torch.Tensor, scores: torch.Tensor):
        keep = scores > 0.5
        out = torch.zeros_like(x)
        out[keep] = self.proj(x[keep])
        return out


class TargetEncoder(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, scores: torch.Tensor):
        keep = scores > 0.5
        frozen = self.proj(x).detach()
        out = torch.zeros_like(x)
        out[keep] = frozen[keep]
        blended = x.clone()
        blended[keep] = self.proj(x[keep]).detach() * 0.5
        with torch.no_grad():
            snapshot = x.clone()
            snapshot[keep] = self.proj(x[keep])
        return out + blended + snapshot
