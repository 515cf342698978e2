"""TCF201 positive: older code registers the empty buffer as `torch.Tensor()` (0 elements) and grows
it on the first long input.

tcfix should report the growth in `_extend_pe` and offer the Safe fix `self._extend_pe(max_len)`.
"""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int = 1024):
        super().__init__()
        self.d_model = d_model
        self.register_buffer("pe", torch.Tensor(), persistent=False)

    def _extend_pe(self, length: int) -> None:
        if self.pe.numel() == 0 or self.pe.size(0) < length:
            pos = torch.arange(length, dtype=torch.float32)[:, None]
            dim = torch.arange(0, self.d_model, 2, dtype=torch.float32)[None, :]
            angles = pos / torch.pow(10000.0, dim / self.d_model)
            self.pe = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._extend_pe(x.size(1))
        return x + self.pe[: x.size(1)].to(x.device)
