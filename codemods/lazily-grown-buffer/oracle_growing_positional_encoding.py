"""Oracle fixture for lazily-grown-buffer (TCF201).

A small transformer encoder for token tagging whose sinusoidal positional encoding starts with an empty,
non-persistent `pe` buffer and grows it in `_extend_pe` whenever `forward` sees a longer sequence
(the ESPnet / transformer-room pattern). Dynamo treats module buffers as static, so every growth fails
the guard on `pe`'s size and recompiles. tcfix calls `self._extend_pe(max_len)` at the end of
`__init__`, so in-range inputs never grow the table under compile.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


class SinusoidalPositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.1):
        super().__init__()
        self.d_model = d_model
        self.max_len = max_len
        self.dropout = nn.Dropout(dropout)
        # Empty until the first forward: the table is sized to the longest input seen so far.
        self.register_buffer("pe", torch.empty(0, d_model), persistent=False)

    def _extend_pe(self, length: int) -> None:
        if self.pe.size(0) >= length:
            return
        position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
        div_term = torch.exp(
            torch.arange(0, self.d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / self.d_model)
        )
        pe = torch.zeros(length, self.d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.pe = pe.to(device=self.pe.device, dtype=self.pe.dtype)

    def forward(self, x):
        # x: (batch, time, d_model)
        if x.size(1) > self.pe.size(0):
            self._extend_pe(x.size(1))
        return self.dropout(x * math.sqrt(self.d_model) + self.pe[: x.size(1)])


class EncoderLayer(nn.Module):
    def __init__(self, d_model: int, heads: int, dropout: float):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        attn = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        x = self.norm1(x + self.dropout(self.out(attn.transpose(1, 2).reshape(b, t, d))))
        return self.norm2(x + self.dropout(self.ff(x)))


class TokenTagger(nn.Module):
    """Embeds tokens, adds positions, runs a small encoder, and tags every token."""

    def __init__(self, vocab_size: int = 100, d_model: int = 32, heads: int = 4, layers: int = 2,
                 num_tags: int = 9, max_len: int = 128, dropout: float = 0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos = SinusoidalPositionalEncoding(d_model, max_len=max_len, dropout=dropout)
        self.layers = nn.ModuleList([EncoderLayer(d_model, heads, dropout) for _ in range(layers)])
        self.tagger = nn.Linear(d_model, num_tags)

    def forward(self, tokens):
        x = self.pos(self.embed(tokens))
        for layer in self.layers:
            x = layer(x)
        return self.tagger(x)


def oracle_cases():
    # Growing lengths, as in a length-bucketed data loader that warms up from short to long batches.
    batches = [(torch.randint(0, 100, (2, length)),) for length in (8, 16, 24, 40, 12)]
    # The first new length legitimately recompiles once (Dynamo then marks time as dynamic); the
    # recompiles whose failed guard is about the `pe` buffer are the hazard.
    expect = {
        r"recompiles matching _buffers\['pe'\]": (">=1", 0),
        "recompiles": (">=2", "<=1"),
    }
    return [
        {
            "name": "inference",
            "factory": lambda: TokenTagger().eval(),
            "inputs": batches,
            "expect": expect,
        },
        {
            "name": "training",
            "factory": TokenTagger,
            "inputs": batches,
            "train": True,
            "atol": 1e-5,
            "expect": expect,
        },
    ]
