"""A masked write in a class that the lookup's frame does not trace (another model of the file)
does not make the hoist Unsafe: removing the tokenizer break joins only the code around the
lookup. The hoist stays Safe; the masked write is reported on its own."""
import torch
from torch import nn


class Captioner(nn.Module):
    def __init__(self, tokenizer, dim: int = 8):
        super().__init__()
        self.tokenizer = tokenizer
        self.embed = nn.Embedding(32, dim)

    def forward(self, input_ids):
        keep = input_ids != self.tokenizer.pad_token_id
        return self.embed(input_ids) * keep.unsqueeze(-1)


class Scatter(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, hidden, features):
        keep = hidden.norm(dim=-1) > 0
        out = self.proj(hidden).clone()
        out[keep] = self.proj(features)
        return out
