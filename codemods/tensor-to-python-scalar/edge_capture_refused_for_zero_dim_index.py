"""An experts loop that indexes `expert_mask` with a row of `nonzero()` (a 0-d tensor) and no test on the
row before: with `capture_scalar_outputs` on, torch 2.15 fails to compile that index
(PendingUnbackedSymbolNotFound) instead of breaking. tcfix does not offer the setting in this file,
and says why under the split sizes."""
import torch
import torch.nn.functional as F
from torch import nn


class Experts(nn.Module):
    def __init__(self, dim: int = 8, num_experts: int = 4):
        super().__init__()
        self.num_experts = num_experts
        self.weight = nn.Parameter(torch.randn(num_experts, dim, dim))

    def forward(self, x: torch.Tensor, chosen: torch.Tensor, grid_thw: torch.Tensor) -> torch.Tensor:
        expert_mask = F.one_hot(chosen, self.num_experts).permute(2, 1, 0)
        expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero().view(-1)
        out = torch.zeros_like(x)
        for expert_idx in expert_hit:
            top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
            out = out.index_add(0, token_idx, x[token_idx] @ self.weight[expert_idx])
        pieces = torch.split(out, (grid_thw.prod(-1) // 4).tolist())
        return torch.stack([p.sum() for p in pieces])
