import torch
from torch import nn


class Stem(nn.Module):
	def forward(self, x):
		B, C, H, W = x.shape
		torch._assert(H % 2 == 0, f"bad height {H}")
		return x * 2
