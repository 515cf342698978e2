# A detector whose head refuses labels ("does not support training"): the model only ever runs
# in inference, so the `if self.training:` clamp of its encoder layer (a branch on tensor data) is
# never traced (real shape: inference-only detection models that keep a copied encoder layer
# with a training-only overflow clamp).
# tcfix: no TCF104 finding.
import torch
from torch import nn


class EncoderLayer(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.mlp = nn.Linear(dim, dim)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        hidden = hidden + self.mlp(hidden)
        if self.training and hidden.dtype == torch.float16:
            if not torch.isfinite(hidden).all():
                hidden = hidden.clamp(-60000.0, 60000.0)
        return hidden


class BoxDetector(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.layer = EncoderLayer(dim)
        self.boxes = nn.Linear(dim, 4)

    def forward(self, features: torch.Tensor, labels=None):
        if labels is not None:
            raise ValueError("BoxDetector does not support training")
        return self.boxes(self.layer(features))
