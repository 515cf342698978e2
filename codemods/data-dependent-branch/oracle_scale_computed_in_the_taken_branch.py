"""Rotary length scaling whose taken branch first computes the scale into a name of its own
(`scale = max_seq / self.trained_len`), then divides the frequency buffer by it; the `else`
keeps the buffer. `scale` is a 0-d tensor that only the taken branch assigns and reads: computing
it on every call changes nothing else, so tcfix moves it before the selection and picks
`inv_freq` with `torch.where` (Unsafe, like every such rewrite). One graph instead of a break per
call (3 graphs -> 1), outputs and gradients equal (torch 2.15).

`ScaleReadAfterBranch` reads its scale after the `if` too: moving it would change what that line
sees on the other side, so it keeps no fix. `FactorInBothBranches` computes `factor` in both
branches: moving both before the selection would leave only the second, so it keeps no fix either.
"""
import torch
from torch import nn


class ScaledRotaryTable(nn.Module):
    def __init__(self, dim: int = 16, trained_len: int = 8):
        super().__init__()
        self.trained_len = trained_len
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))
        self.mix = nn.Linear(dim, dim)

    def forward(self, x, position_ids):
        max_seq = position_ids.max() + 1
        if max_seq > self.trained_len:
            scale = max_seq / self.trained_len
            inv_freq = self.inv_freq / scale
        else:
            inv_freq = self.inv_freq
        angles = position_ids[..., None].float() * inv_freq
        emb = torch.cat([angles, angles], dim=-1)
        h = self.mix(x)
        return h * emb.cos() + h.roll(1, dims=-1) * emb.sin()


class ScaleReadAfterBranch(nn.Module):
    def __init__(self, dim: int = 16, trained_len: int = 8):
        super().__init__()
        self.trained_len = trained_len
        self.register_buffer("inv_freq", torch.ones(dim // 2))

    def forward(self, position_ids):
        scale = torch.ones(())
        max_seq = position_ids.max() + 1
        if max_seq > self.trained_len:
            scale = max_seq / self.trained_len
            inv_freq = self.inv_freq / scale
        else:
            inv_freq = self.inv_freq
        return position_ids[..., None].float() * inv_freq * scale


class FactorInBothBranches(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            factor = 2.0
            x = x * factor
        else:
            factor = 0.5
            x = x * factor
        return x


def oracle_cases():
    # The positions cross the trained length on the later calls: both sides of the test run.
    batches = [(torch.randn(2, 6, 16), torch.arange(6).expand(2, 6) + offset) for offset in (0, 5, 10)]
    expect = {"graph_breaks": (None, 0), "graphs": (">=2", 1), "eager_frames": (None, 0)}
    return [
        {
            "name": "inference",
            "factory": lambda: ScaledRotaryTable().eval(),
            "inputs": batches,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": expect,
        },
        {
            "name": "training",
            "factory": ScaledRotaryTable,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": expect,
        },
    ]
