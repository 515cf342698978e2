# Tab indentation: the new `if` block must indent with a tab, not four spaces.
# tcfix: TCF101 (high) twice (one inside the `for` loop: critical), both guarded with tabs.
import torch
from torch import nn


class Stack(nn.Module):
	def __init__(self, dim: int, depth: int):
		super().__init__()
		self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

	def forward(self, x):
		print("Stack input", x.shape)
		for layer in self.layers:
			x = torch.tanh(layer(x))
			print(
				"layer output", x.norm()
			)
		return x
