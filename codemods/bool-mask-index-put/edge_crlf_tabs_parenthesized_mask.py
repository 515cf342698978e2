"""CRLF line endings, tabs, a mask that needs parentheses."""
import torch
from torch import nn


class Fill(nn.Module):
	def __init__(self):
		super().__init__()
		self.proj = nn.Linear(4, 4)

	def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
		out = x.new_zeros(x.shape)
		out[~keep.bool()] = self.proj(x[:2])  # fill the dropped rows
		return out
