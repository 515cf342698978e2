"""TCF201 edge: tab indentation.

tcfix should report the growth in `_extend_pe` and insert `self._extend_pe(max_len)` at the end of
`__init__` indented with two tabs, like the lines around it.
"""
import torch
from torch import nn


class SinePositionTable(nn.Module):
	def __init__(self, d_model: int, max_len: int = 512):
		super().__init__()
		self.d_model = d_model
		self.register_buffer("pe", torch.empty(0, d_model), persistent=False)

	def _extend_pe(self, length: int) -> None:
		if self.pe.size(0) < length:
			pos = torch.arange(self.pe.size(0), length, dtype=torch.float32, device=self.pe.device)[:, None]
			freq = 10000 ** (-torch.arange(self.d_model, device=self.pe.device) / self.d_model)
			self.pe = torch.cat((self.pe, torch.sin(pos * freq)), dim=0)

	def forward(self, x: torch.Tensor) -> torch.Tensor:
		self._extend_pe(x.size(1))
		return x + self.pe[: x.size(1)]
