"""TCF202 edge: tab indentation.

tcfix should report the read of `self.capture` and insert `@torch.compiler.disable` above `def _hook`
indented with one tab, like the def.
"""
import torch
from torch import nn


class TappedMLP(nn.Module):
	def __init__(self, dim: int = 32):
		super().__init__()
		self.fc1 = nn.Linear(dim, dim)
		self.fc2 = nn.Linear(dim, dim)
		self.capture = False
		self.taps: list[torch.Tensor] = []
		self.fc1.register_forward_hook(self._hook)

	def set_capture(self, on: bool) -> None:
		self.capture = on

	def _hook(self, module, inputs, output):
		if self.capture:
			self.taps.append(output.detach())

	def forward(self, x: torch.Tensor) -> torch.Tensor:
		return self.fc2(torch.relu(self.fc1(x)))
