# The tokenizer lookup sits inside a `for` loop in forward: a graph break in a loop makes Dynamo
# skip the whole frame (GB7000).
# tcfix: TCF102 reported as CRITICAL; fix caches the id in __init__.
import torch
from torch import nn


class SegmentPooler(nn.Module):
    def __init__(self, tokenizer, dim: int, layers: int):
        super().__init__()
        self.tokenizer = tokenizer
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(layers)])

    def forward(self, input_ids, hidden):
        for layer in self.layers:
            sep = (input_ids == self.tokenizer.sep_token_id).unsqueeze(-1)
            hidden = torch.where(sep, hidden, torch.relu(layer(hidden)))
        return hidden
