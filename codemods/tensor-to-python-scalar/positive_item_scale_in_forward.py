"""A learned temperature read back as a Python float to scale the logits."""
import torch
from torch import nn


class ContrastiveHead(nn.Module):
    def __init__(self, dim: int = 64):
        super().__init__()
        self.image_proj = nn.Linear(dim, dim)
        self.text_proj = nn.Linear(dim, dim)
        self.logit_scale = nn.Parameter(torch.tensor(2.659))

    def forward(self, image_features: torch.Tensor, text_features: torch.Tensor) -> torch.Tensor:
        image = self.image_proj(image_features)
        text = self.text_proj(text_features)
        scale = self.logit_scale.exp()
        logits = image @ text.t() * scale.item()
        return logits
