"""TCF107 edge: CRLF line endings, tab indentation, `import time as clock` and
`from time import perf_counter`."""
import time as clock
from time import perf_counter

from torch import nn


class Head(nn.Module):
	def __init__(self):
		super().__init__()
		self.fc = nn.Linear(4, 4)

	def forward(self, x):
		t = clock.time()
		y = self.fc(x)
		self.elapsed = perf_counter() - t
		return y
