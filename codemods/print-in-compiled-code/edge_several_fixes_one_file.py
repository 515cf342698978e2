# Several TCF101 fixes in one file: two adjacent prints, a logger call in a loop, a print in a
# hook method, and one in a torch.compile'd function. Each must be guarded once, the edits must not
# collide, and a second --apply must change nothing.
# tcfix: 5 findings (the loop one critical), all fixed.
import logging

import torch
from torch import nn

log = logging.getLogger(__name__)


class Net(nn.Module):
    def __init__(self, dim: int = 16, depth: int = 3):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.register_forward_hook(self._report)

    def _report(self, module, inputs, output):
        print("Net output", output.shape)

    def forward(self, x):
        print("Net input", x.shape)
        print("Net input dtype", x.dtype)
        for i, layer in enumerate(self.layers):
            x = torch.relu(layer(x))
            log.debug("layer %d done", i)
        return x


@torch.compile
def loss_fn(pred, target):
    print("loss_fn", pred.shape)
    return (pred - target).pow(2).mean()
