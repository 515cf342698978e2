"""TCF201 negative: the cache starts empty but is only resized outside the compiled region: in a
`load_state_dict` pre-hook (so checkpoints with a longer table load) and in `resize_cache`, which the
training script calls before compiling. `forward` only slices it.

tcfix should report nothing for TCF201.
"""
import torch
from torch import nn


class RotaryCache(nn.Module):
    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        self.head_dim = head_dim
        self.base = base
        self.register_buffer("cos_sin", torch.empty(0, head_dim), persistent=True)
        self._register_load_state_dict_pre_hook(self._resize_before_load)

    def _resize_before_load(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        saved = state_dict.get(prefix + "cos_sin")
        if saved is not None and saved.shape != self.cos_sin.shape:
            self.cos_sin = torch.empty_like(saved)

    def resize_cache(self, seq_len: int) -> None:
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        freqs = torch.outer(torch.arange(seq_len).float(), inv_freq)
        self.cos_sin = torch.cat((freqs.cos(), freqs.sin()), dim=-1).to(self.cos_sin.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cos, sin = self.cos_sin[: x.size(-2)].chunk(2, dim=-1)
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


def build(head_dim: int, max_len: int) -> nn.Module:
    rope = RotaryCache(head_dim)
    rope.resize_cache(max_len)
    return torch.compile(rope)
