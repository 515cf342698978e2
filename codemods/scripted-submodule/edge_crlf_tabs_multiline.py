"""TCF109 edge: CRLF line endings, tabs, a multi-line script call and `import torch.jit as jit`."""
import torch.jit as jit
from torch import nn


class Act(nn.Module):
	def forward(self, x):
		return x.tanh()


class Net(nn.Module):
	def __init__(self):
		super().__init__()
		self.act = jit.script(
			Act()  # scripted for speed, once
		)

	def forward(self, x):
		return self.act(x)
