"""TCF110 edge: CRLF, tabs, and hooks on submodules reached through an index."""
from torch import nn


class Net(nn.Module):
	def __init__(self):
		super().__init__()
		self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
		for layer in self.layers:
			layer.register_full_backward_hook(print)
		self.layers[0].register_full_backward_hook(print)

	def forward(self, x):
		for layer in self.layers:
			x = layer(x)
		return x
