"""TCF302 edge: CRLF, tabs, module-level script with an aliased torch."""
import torch as th
from torch import nn

net = nn.Linear(4, 4)
fast = th.compile(net)
if __name__ == "__main__":
	th.save(fast.state_dict(), "ckpt.pt")
	fast.load_state_dict(th.load("ckpt.pt"))
