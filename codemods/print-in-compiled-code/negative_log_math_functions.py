# `log` here is math, not logging: `math.log(...)`, `torch.log(...)`, `x.log()`, `F.log_softmax`.
# tcfix: no TCF101 finding.
import math

import torch
import torch.nn.functional as F
from torch import nn


class TemperedSoftmax(nn.Module):
    def __init__(self, temperature: float = 2.0):
        super().__init__()
        self.log_temperature = nn.Parameter(torch.tensor(math.log(temperature)))

    def forward(self, logits, probs):
        scaled = logits / self.log_temperature.exp()
        entropy = -(probs * probs.clamp_min(1e-9).log()).sum(-1)
        return F.log_softmax(scaled, dim=-1), torch.log(entropy + 1.0), math.log(2.0)
