"""Oracle fixture for tensor-to-python-scalar (TCF103).

A CLIP-style contrastive head that scales its logits by a learned temperature read with `.item()`, and
a residual block that weights its branch by a learned gate the same way. Each `.item()` is a graph
break (GB0124). With --unsafe-fixes tcfix writes `.detach().reshape(())` for each (the gate has shape
(1,), and tcfix cannot see that `scale` is 0-d), so the compiled forward is one graph;
outputs and parameter gradients match the original's eager ones: like `.item()`, `.detach()` keeps the
scale out of autograd, so `logit_scale` and `gate` still get no gradient from these products.
"""
import torch
from torch import nn


class ContrastiveHead(nn.Module):
    def __init__(self, dim: int = 32):
        super().__init__()
        self.image_proj = nn.Linear(dim, dim)
        self.text_proj = nn.Linear(dim, dim)
        self.logit_scale = nn.Parameter(torch.tensor(2.659))
        self.gate = nn.Parameter(torch.full((1,), 0.25))
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, image_features: torch.Tensor, text_features: torch.Tensor) -> torch.Tensor:
        image = self.image_proj(image_features)
        image = image + self.mlp(image) * self.gate.item()
        text = self.text_proj(text_features)
        image = image / image.norm(dim=-1, keepdim=True)
        text = text / text.norm(dim=-1, keepdim=True)
        scale = self.logit_scale.exp()
        return image @ text.t() * scale.item()


def oracle_cases():
    batches = [(torch.randn(6, 32), torch.randn(6, 32)) for _ in range(3)]
    return [
        {
            "name": "inference",
            "factory": lambda: ContrastiveHead().eval(),
            "inputs": batches,
            "unsafe_fixes": True,
            "expect": {"graph_breaks": (">=2", 0), "graphs": (">1", 1), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": ContrastiveHead,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (">=2", 0), "graphs": (">1", 1), "eager_frames": (None, 0)},
        },
    ]
