import torch
from torch import nn


class Heads(nn.Module):
	def __init__(self):
		super().__init__()
		self.fc = nn.Linear(4, 4)

	def forward(self, x):
		n = x.size(1)
		H = W = int(n ** 0.5)
		for i in range(H):
			x = x + 0
		return {j: self.fc(x[:, j]) for j in range(W)}
