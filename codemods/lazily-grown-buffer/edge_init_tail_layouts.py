"""TCF201 edge: `__init__` starts with a docstring and ends with a multi-line `if` block followed by a
comment line and blank lines.

tcfix should report the growth and insert `self._extend_pe(max_seq_len)` after the `if` block, at the
indentation of `__init__`'s body (not inside the `if`, not in the docstring).
"""
import torch
from torch import nn


class PositionEmbedding(nn.Module):
    def __init__(self, d_model: int, max_seq_len: int = 4096, learned_scale: bool = False):
        """Sinusoidal positions, optionally scaled by a learned factor."""
        super().__init__()
        self.d_model = d_model
        self.register_buffer("pe", torch.empty(0, d_model), persistent=False)
        if learned_scale:
            self.scale = nn.Parameter(
                torch.ones(1),
            )  # trailing comment on the closing line
        else:
            self.scale = None
        # The table is filled lazily.

    def _extend_pe(self, length: int) -> None:
        if self.pe.size(0) >= length:
            return
        pos = torch.arange(length, dtype=torch.float32)[:, None]
        dim = torch.arange(0, self.d_model, 2, dtype=torch.float32)[None, :]
        angles = pos / torch.pow(10000.0, dim / self.d_model)
        self.pe = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(1).to(self.pe.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._extend_pe(x.size(1))
        pe = self.pe[: x.size(1)]
        if self.scale is not None:
            pe = pe * self.scale
        return x + pe
