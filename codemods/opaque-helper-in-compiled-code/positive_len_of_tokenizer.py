# `len(self.tokenizer)` in forward: `__len__` of an HF fast tokenizer calls the Rust
# `get_vocab_size`, just like the token-id properties (GB0156).
# tcfix: TCF102 (high) on `len(self.tokenizer)`; the value does not depend on the inputs, so it can
# be cached in __init__ like an attribute.
import torch
from torch import nn


class LMHead(nn.Module):
    def __init__(self, tokenizer, dim: int, padded_vocab: int):
        super().__init__()
        self.tokenizer = tokenizer
        self.proj = nn.Linear(dim, padded_vocab, bias=False)

    def forward(self, hidden):
        logits = self.proj(hidden)
        return logits[..., : len(self.tokenizer)]
