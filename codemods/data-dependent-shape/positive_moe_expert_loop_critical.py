"""A mixture-of-experts layer (the transformers `Experts` pattern, trimmed): `nonzero()` picks the
experts that got tokens, and `torch.where(mask)` the tokens of each, inside the expert loop."""
import torch
import torch.nn.functional as F
from torch import nn


class Experts(nn.Module):
    def __init__(self, dim: int = 16, num_experts: int = 4, top_k: int = 2):
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(num_experts)])
        self.num_experts = num_experts
        self.top_k = top_k

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        router_logits = self.gate(hidden_states)
        weights, selected = torch.topk(router_logits.softmax(dim=-1), self.top_k, dim=-1)
        expert_mask = F.one_hot(selected, num_classes=self.num_experts).permute(2, 1, 0)
        expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        final = torch.zeros_like(hidden_states)
        for expert_idx in expert_hit:
            top_k_pos, token_idx = torch.where(expert_mask[expert_idx[0]])
            current = self.experts[expert_idx[0]](hidden_states[token_idx])
            final.index_add_(0, token_idx, current * weights[token_idx, top_k_pos, None])
        return final
