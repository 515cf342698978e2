"""Oracle fixture for data-dependent-branch (TCF104), on shapes tcfix used to miss.

A rotary embedding that stretches its frequencies when the positions run past the length it was
trained for (the dynamic-NTK / "scaling" branch of many decoders): `max_seq = position_ids.max() + 1`
then `if max_seq > self.original_max_seq_len:`. Nothing is annotated: `position_ids` is a positional
input of forward, presumed a tensor, and `max_seq` is a 0-d tensor (a reduction without `dim`, plus
a Python number), so the test is a 0-d boolean tensor and the branch breaks the graph. With
--unsafe-fixes tcfix picks the scale with `torch.where`: both sides are cheap and finite, one graph,
outputs and gradients equal. (The scale divides by a literal: tcfix does not rewrite `m / self.n`,
since an attribute could be a tensor parameter whose shape would broadcast the result.)
"""
import torch
from torch import nn


class ScaledRotary(nn.Module):
    def __init__(self, dim: int = 16, original_max_seq_len: int = 8):
        super().__init__()
        self.original_max_seq_len = original_max_seq_len
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, position_ids):
        max_seq = position_ids.max() + 1
        if max_seq > self.original_max_seq_len:
            scale = max_seq / 8
        else:
            scale = (max_seq / 8).clamp(min=1.0)
        freqs = (position_ids[..., None].float() / scale) * self.inv_freq
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
            "factory": lambda: ScaledRotary().eval(),
            "inputs": batches,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (3, 1), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": ScaledRotary,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (3, 1), "eager_frames": (None, 0)},
        },
    ]
