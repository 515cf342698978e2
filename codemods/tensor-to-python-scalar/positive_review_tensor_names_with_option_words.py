# transformers' shape: unannotated inputs whose names hold a word that elsewhere names an option
# (`text`, `prompt`, `cache`, `type`, `group`) but end like tensor data (`_embeds`, `_position`,
# `_ids`, `_mask`). The last word decides: they are presumed tensors, and reading them back as
# numbers breaks the graph. A flag or a count stays a Python value whatever its last word.
# tcfix: TCF103 on each `.item()` of a tensor input, none on `num_labels`.
import torch
from torch import nn


class TextEncoder(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, text_embeds, cache_position, token_type_ids, group_mask, num_labels):
        start = cache_position[0].item()
        kinds = token_type_ids.max().item()
        kept = group_mask.sum().item()
        out = self.proj(text_embeds) * kept
        return out[:, start:] / (kinds + 1), num_labels
