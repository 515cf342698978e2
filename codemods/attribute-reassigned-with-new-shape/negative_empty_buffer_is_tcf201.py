"""An empty buffer grown in forward is TCF201's finding, not this rule's."""
import torch
from torch import nn


class Positions(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        self.d_model = d_model
        self.register_buffer("pe", torch.empty(0, d_model), persistent=False)

    def forward(self, x):
        T = x.size(1)
        if self.pe.size(0) < T:
            self.pe = torch.zeros(T, self.d_model)
        return x + self.pe[:T]
