"""CRLF line endings and tab indentation: the dense sum keeps them, and the setting line is written with
the file's CRLF."""
import torch
from torch import nn


class Head(nn.Module):
	def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
		positive = x[x > 0].sum()
		kept = labels != -100
		return positive + x[kept].mean(0).sum()
