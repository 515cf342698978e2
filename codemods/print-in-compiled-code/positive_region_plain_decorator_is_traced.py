# A decorator of the project that only logs (it neither disables nor marks the function): the
# decorated helper is still traced, and so is its print.
# tcfix: TCF101 on the print in the helper.
import functools

import torch
from torch import nn


def traced_timer(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@traced_timer
def scale(x: torch.Tensor) -> torch.Tensor:
    print("scaling", x.shape)
    return x * 2


class Scaler(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return scale(x)
