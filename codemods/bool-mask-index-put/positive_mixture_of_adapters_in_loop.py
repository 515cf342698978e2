"""Per-language adapters (X-MOD pattern): masked writes in a loop, report only."""
import torch
from torch import nn


class LangAdapters(nn.Module):
    def __init__(self, dim: int = 8, langs: int = 3):
        super().__init__()
        self.adapters = nn.ModuleList([nn.Linear(dim, dim) for _ in range(langs)])

    def forward(self, hidden_states: torch.Tensor, lang_ids: torch.Tensor) -> torch.Tensor:
        new_hidden_states = torch.zeros_like(hidden_states)
        for adapter_idx in range(len(self.adapters)):
            lang_mask = lang_ids == adapter_idx
            new_hidden_states[lang_mask] = self.adapters[adapter_idx](hidden_states[lang_mask])
        return new_hidden_states
