"""TCF205 negative, trimmed from transformers 5.23.0 (YOSO): the helper's list path is only fed a
list written out in the call, `normalize([query_layer, key_layer])`: two elements, always."""
import torch
from torch import nn


def normalize(input_tensors):
    if isinstance(input_tensors, list):
        out = []
        for tensor in input_tensors:
            out.append(nn.functional.normalize(tensor, p=2, dim=-1))
        return out
    return nn.functional.normalize(input_tensors, p=2, dim=-1)


class YosoSelfAttention(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)

    def forward(self, hidden_states):
        query_layer, key_layer = normalize([self.query(hidden_states), self.key(hidden_states)])
        context_layer = torch.softmax(query_layer @ key_layer.transpose(-1, -2), dim=-1) @ hidden_states
        return normalize(context_layer)
