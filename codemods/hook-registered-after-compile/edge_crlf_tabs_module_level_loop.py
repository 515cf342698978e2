"""TCF301 edge: CRLF, tabs, module level script code, and a registration inside the training
loop after the first compiled call."""
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
fast = torch.compile(model)
for step in range(3):
	out = fast(torch.randn(8, 4))
	if step == 1:
		model[2].register_forward_hook(lambda m, i, o: print(o.shape))
