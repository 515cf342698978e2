"""Writes into tensors others can see: an argument, a buffer, a view. Rebinding would change what the
caller sees, so no fix."""
import torch
from torch import nn


class Scatter(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("memory", torch.zeros(4, dim))

    def forward(self, hidden_states: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
        keep = hidden_states.norm(dim=-1) > 1.0
        hidden_states[keep] = self.proj(updates)
        self.memory[self.memory.sum(-1) == 0] = self.proj(updates[:4])
        out = torch.zeros_like(hidden_states)
        view = out[:, :2]
        out[keep] = self.proj(updates)
        return out + view.sum()
