"""`int()`, `float()` and `bool()` of tensors: each is an `.item()` in disguise."""
import torch
from torch import nn


class TokenPruner(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, tokens: torch.Tensor, keep_mask: torch.Tensor) -> torch.Tensor:
        scores = self.score(tokens).squeeze(-1)
        keep = int(keep_mask.sum())
        threshold = float(scores.mean())
        if bool(scores.max() > threshold):
            scores = scores - threshold
        return tokens[:, :keep] * scores[:, :keep, None]
