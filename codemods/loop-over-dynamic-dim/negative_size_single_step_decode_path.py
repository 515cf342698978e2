"""A linear-attention layer with two paths (gated delta-rule layers are written so): prompts go
through a batched path, and the one-token decode step through a helper that walks the sequence
token by token. The helper is only called under `if state is not None and seq_len == 1:`, so its
loop over the sequence runs once, whatever the prompt length: nothing is unrolled per size.
tcfix: nothing."""
import torch
from torch import nn


def step_recurrence(q, k, v, state):
    length = q.shape[2]
    out = torch.zeros_like(v)
    for t in range(length):
        state = state * 0.9 + k[:, :, t, :, None] * v[:, :, t, None, :]
        out[:, :, t] = (q[:, :, t, :, None] * state).sum(-2)
    return out, state


def batched_recurrence(q, k, v):
    scores = torch.einsum("bhtd,bhsd->bhts", q, k).tril()
    return scores @ v, None


class LinearAttention(nn.Module):
    def __init__(self, dim: int = 16, heads: int = 2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, state: torch.Tensor | None = None):
        batch, seq_len, dim = x.shape
        q, k, v = self.qkv(x).view(batch, seq_len, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        if state is not None and seq_len == 1:
            y, state = step_recurrence(q, k, v, state)
        else:
            y, state = batched_recurrence(q, k, v)
        return self.out(y.transpose(1, 2).reshape(batch, seq_len, dim)), state
