"""A hand-written KV-cache decoder (the Llama reference layout): `forward(tokens, start_pos)` is
called once per generated token with `start_pos` advancing, and the attention writes and reads its
cache with `start_pos` as slice bounds. The first new position compiles a second graph before
Dynamo makes `start_pos` dynamic. The prefill/decode branch on `seqlen` adds no graph of its own
and is not reported."""
import torch
from torch import nn


class CachedAttention(nn.Module):
    def __init__(self, dim: int, max_batch: int, max_len: int):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("keys", torch.zeros(max_batch, max_len, dim))
        self.register_buffer("values", torch.zeros(max_batch, max_len, dim))

    def forward(self, x: torch.Tensor, start_pos: int, mask=None):
        bsz, seqlen, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        self.keys[:bsz, start_pos : start_pos + seqlen] = k
        self.values[:bsz, start_pos : start_pos + seqlen] = v
        keys = self.keys[:bsz, : start_pos + seqlen]
        values = self.values[:bsz, : start_pos + seqlen]
        scores = q @ keys.transpose(1, 2)
        if mask is not None:
            scores = scores + mask
        return scores.softmax(-1) @ values


class TinyDecoder(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.attn = CachedAttention(dim, 4, 256)
        self.register_buffer("rope", torch.randn(256, dim))

    def forward(self, tokens, start_pos):
        seqlen = tokens.shape[1]
        h = self.embed(tokens) + self.rope[start_pos : start_pos + seqlen]
        mask = None
        if seqlen > 1:
            mask = torch.full((seqlen, seqlen), float("-inf"), device=tokens.device).triu(1)
            mask = torch.hstack([torch.zeros(seqlen, start_pos, device=tokens.device), mask])
        return self.attn(h, start_pos, mask)
