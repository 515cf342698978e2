# Plain config objects (`self.config.hidden_dim`, `self.cfg.n_heads`): Dynamo treats their
# attributes as constants (guarded), no graph break.
# tcfix: no TCF102 finding.
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class AttnConfig:
    hidden_dim: int = 256
    n_heads: int = 8
    dropout: float = 0.0


class SelfAttention(nn.Module):
    def __init__(self, config: AttnConfig):
        super().__init__()
        self.config = config
        self.cfg = config
        self.qkv = nn.Linear(config.hidden_dim, 3 * config.hidden_dim)
        self.out = nn.Linear(config.hidden_dim, config.hidden_dim)

    def forward(self, x):
        b, t, _ = x.shape
        head_dim = self.config.hidden_dim // self.cfg.n_heads
        q, k, v = self.qkv(x).view(b, t, 3, self.cfg.n_heads, head_dim).unbind(2)
        y = nn.functional.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
            dropout_p=self.config.dropout if self.training else 0.0,
        )
        return self.out(y.transpose(1, 2).reshape(b, t, self.config.hidden_dim))
