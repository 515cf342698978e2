"""Mixture-of-experts routing: the count of tokens per expert is read back into the same name
(`sizes = sizes.tolist()`). The name ends as a list, but where `.tolist()` reads it, the binding
that reaches it is a tensor."""
import torch
from torch import nn


class ExpertRouter(nn.Module):
    def __init__(self, dim: int = 16, experts: int = 4, top_k: int = 2):
        super().__init__()
        self.gate = nn.Linear(dim, experts, bias=False)
        self.experts = experts
        self.top_k = top_k

    def forward(self, tokens):
        logits = self.gate(tokens)
        _, chosen = logits.topk(self.top_k, dim=1)
        picked = torch.zeros(tokens.size(0), self.experts).scatter(1, chosen, 1)
        sizes = picked.long().sum(0)
        sizes = sizes.tolist()
        order = chosen.flatten().sort(0).indices
        return tokens[order // self.top_k].split(sizes, dim=0)
