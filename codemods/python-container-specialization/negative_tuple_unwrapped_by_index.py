"""transformers idiom: a tuple output unwrapped by index, length never shapes the code."""
import torch
from torch import nn


class Pooler(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dense = nn.Linear(dim, dim)

    def forward(self, hidden_states):
        if isinstance(hidden_states, tuple):
            hidden_states = hidden_states[0]
        return torch.tanh(self.dense(hidden_states[:, 0]))
