"""TCF201 edge: a compact `__init__` whose statements share the `def` line (`; `-separated).

tcfix should report the growth in `_extend_pe`. If it offers a fix, the new call must run inside
`__init__`; a line indented like the `def` would land in the class body, where `self` is undefined
(NameError at import). Report-only is acceptable here.
"""
import torch
from torch import nn


class TinyPositions(nn.Module):
    def __init__(self, d_model: int, max_len: int = 256): super().__init__(); self.register_buffer("pe", torch.empty(0, d_model), persistent=False)

    def _extend_pe(self, length: int) -> None:
        if self.pe.size(0) < length:
            pos = torch.arange(length, dtype=torch.float32, device=self.pe.device)[:, None]
            self.pe = torch.sin(pos / 10000 ** (torch.arange(self.pe.size(1), device=self.pe.device) / self.pe.size(1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._extend_pe(x.size(1))
        return x + self.pe[: x.size(1)]
