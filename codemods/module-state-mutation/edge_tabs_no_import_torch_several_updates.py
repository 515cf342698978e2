from torch import nn


class Counter(nn.Module):
	def __init__(self):
		super().__init__()
		self.fc = nn.Linear(4, 4)
		self.step = 0
		self.seen = -1

	def forward(self, x):
		self.step += 1
		self.seen = self.seen + x.shape[0]
		return self.fc(x) * self.step + self.helper(x)

	def helper(self, x):
		self.step -= 1 + 1
		return x
