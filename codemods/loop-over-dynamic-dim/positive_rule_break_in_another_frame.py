"""The loop over an input's size is clean, and the graph break sits in a helper that the frame
calls outside any loop. The break splits the graph but does not send the frame eagerly: the loop
is still unrolled for each size, so TCF204 still reports it (and TCF101 the print)."""
import torch
from torch import nn


def announce(x):
    print("shape", x.shape)
    return x


class Accumulate(nn.Module):
    def forward(self, x: torch.Tensor):
        x = announce(x)
        total = x[0]
        for i in range(x.shape[0]):
            total = total + x[i]
        return total
