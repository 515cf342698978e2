"""Rotary scaling that divides the module's frequency buffer itself (Llama-3-style length scaling):
both branches only bind `inv_freq`, from `self.inv_freq` (a buffer) and a 0-d tensor
(`max_seq / self.original_max_seq_len`), so the result has the buffer's shape whichever way the
test goes. The fix picks with `torch.where` over the two full expressions: one graph, outputs and
gradients equal to the original's (measured under torch 2.15)."""
import torch
from torch import nn


class BufferScaledRotary(nn.Module):
    def __init__(self, dim: int = 16, original_max_seq_len: int = 8):
        super().__init__()
        self.original_max_seq_len = original_max_seq_len
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, position_ids):
        max_seq = position_ids.max() + 1
        if max_seq > self.original_max_seq_len:
            inv_freq = self.inv_freq / (max_seq / self.original_max_seq_len)
        else:
            inv_freq = self.inv_freq
        freqs = position_ids[..., None].float() * inv_freq
        emb = torch.cat([freqs, freqs], dim=-1)
        h = self.proj(x)
        return h * emb.cos() + h.roll(1, dims=-1) * emb.sin()


def oracle_cases():
    # The same shapes every call; the positions cross the trained length on the later calls, so
    # both sides of the test run.
    batches = [(torch.randn(2, 6, 16), torch.arange(6).expand(2, 6) + offset) for offset in (0, 5, 10)]
    return [
        {
            "name": "inference",
            "factory": lambda: BufferScaledRotary().eval(),
            "inputs": batches,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (None, 1), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": BufferScaledRotary,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (None, 1), "eager_frames": (None, 0)},
        },
    ]
