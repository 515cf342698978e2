"""Python numbers that are not tensor data: shapes, sizes, config values, lengths."""
import torch
from torch import nn


class Config:
    hidden_size = 32
    dropout = 0.1


class Embeddings(nn.Module):
    def __init__(self, config: Config):
        super().__init__()
        self.config = config
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        batch = int(x.shape[0])
        length = int(x.size(1))
        width = float(self.config.hidden_size)
        depth = int(len(x))
        ndim = int(x.dim())
        use_scale = bool(scale)
        h = self.proj(x) / width**0.5
        h = h.reshape(batch, length, -1)
        return h * scale if use_scale and depth and ndim else h
