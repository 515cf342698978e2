"""The fp16 overflow guard of many encoder layers: clamp only when something is infinite."""
import torch
from torch import nn


class EncoderLayer(nn.Module):
    def __init__(self, dim: int = 32):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.fc = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.attn(hidden_states, hidden_states, hidden_states)[0]
        hidden_states = hidden_states + self.fc(hidden_states)
        if torch.isinf(hidden_states).any():
            hidden_states = torch.clamp(hidden_states, min=-65000.0, max=65000.0)
        return hidden_states
