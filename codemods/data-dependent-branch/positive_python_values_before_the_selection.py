"""The fp16 overflow clamps of transformers' layers: `clamp_value = torch.finfo(h.dtype).max - 1000`
is a Python number each branch computes for itself, so it runs before the `torch.where`; a Python
part of the test (`h.dtype == torch.float16 and ...`) stays an `if`. The same temporary in three
branches of one forward (LongT5) is still a temporary. Refused: the temporary read after the `if`,
an `else` under a Python part, a name bound only in the branch (`patch_valid`), None on one side."""
import torch
from torch import nn


class DetrLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = self.fc(hidden_states)
        if self.training:
            if not torch.isfinite(hidden_states).all():
                clamp_value = torch.finfo(hidden_states.dtype).max - 1000
                hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        return hidden_states


class LongT5Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.Linear(4, 4)
        self.ff = nn.Linear(4, 4)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = self.attn(hidden_states)
        if hidden_states.dtype == torch.float16 and torch.isinf(hidden_states).any():
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        if hidden_states.shape[0] > 1:
            hidden_states = self.ff(hidden_states)
            if hidden_states.dtype == torch.float16 and torch.isinf(hidden_states).any():
                clamp_value = torch.finfo(hidden_states.dtype).max - 1000
                hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        return hidden_states


class Refused(nn.Module):
    def forward(self, hidden_states: torch.Tensor, sentinel: torch.Tensor, padding_mask: torch.Tensor):
        if not torch.isfinite(hidden_states).all():
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        print(clamp_value)
        if hidden_states.dtype == torch.float16 and hidden_states.max() > 100:
            hidden_states = hidden_states * 0.5
        else:
            hidden_states = hidden_states * 2
        patch_valid = None
        if sentinel.any():
            patch_valid = ~sentinel
        if not padding_mask.any():
            padding_mask = None
        return hidden_states, patch_valid, padding_mask
