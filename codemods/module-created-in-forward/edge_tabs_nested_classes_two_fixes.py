from torch import nn


class Outer(nn.Module):
	class Inner(nn.Module):
		def __init__(self, k):
			super().__init__()
			self.k = k

		def forward(self, x):
			self.pool = nn.MaxPool2d(self.k)
			self.act = nn.ReLU(inplace=True)
			return self.act(self.pool(x))

	def __init__(self):
		super().__init__()
		self.inner = Outer.Inner(2)

	def forward(self, x):
		k = x.shape[-1] // 4
		self.pool = nn.AvgPool2d(k)
		return self.pool(self.inner(x))
