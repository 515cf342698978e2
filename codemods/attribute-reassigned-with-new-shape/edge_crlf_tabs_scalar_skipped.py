import torch
from torch import nn


class A(nn.Module):
	def __init__(self):
		super().__init__()
		self.grid = None
		self.cached_len = 0

	def forward(self, x):
		h, w = x.shape[-2:]
		if self.grid is None or self.grid.shape[-1] != w:
			self.grid = torch.stack(torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij"))
			self.cached_len = w
		return x + self.grid.sum(0)
