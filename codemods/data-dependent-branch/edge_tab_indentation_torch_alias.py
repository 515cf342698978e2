"""Tab indentation; `import torch as th`."""
import torch as th
from torch import nn


class Clip(nn.Module):
	def __init__(self):
		super().__init__()
		self.fc = nn.Linear(4, 4)

	def forward(self, x: th.Tensor) -> th.Tensor:
		h = self.fc(x)
		if h.abs().max() > 100:
			h = h.clamp(-100, 100)
		else:
			h = h
		return h
