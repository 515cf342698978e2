"""TCF104 positive: forward's input is named like a Python index (`idx`), but the code calls
`idx.max()`, which only a tensor has: it is token ids, and the check on their maximum branches on
tensor data. A name is a guess; what the code does with the value decides."""
import torch
from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8):
        super().__init__()
        self.vocab = vocab
        self.table = nn.Embedding(vocab, dim)

    def forward(self, idx):
        if idx.max() >= self.vocab:
            raise ValueError("token id out of range")
        return self.table(idx)


class Picker(nn.Module):
    """Negative beside it: `idx` used only as a Python index stays a Python value."""

    def __init__(self, dim: int = 8):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])

    def forward(self, x, idx):
        if idx > 1:
            return self.heads[idx](x) * 2
        return self.heads[idx](x)
