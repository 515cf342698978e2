"""Branches no rewrite keeps, each with what keeps it a branch: `continue`, `break`, `return`, an
in-place update, an in-place tensor method, a call for its effect, a call of a submodule."""
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        self.refine = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, routing: torch.Tensor, lengths: torch.Tensor):
        out = torch.zeros_like(x)
        for expert_idx in routing:
            if expert_idx == 3:
                continue
            if (expert_idx < 0).all():
                break
            out = out + self.experts[0](x)
        if lengths.sum() == 0:
            return out
        chunks = []
        if lengths.max() > 4:
            chunks += [lengths.max()]
        if out.min() < 0:
            out.clamp_(min=0)
        if out.max() > 100:
            logger.warning("large activations")
        if out.mean() > 0:
            out = self.refine(out)
        return out, chunks
