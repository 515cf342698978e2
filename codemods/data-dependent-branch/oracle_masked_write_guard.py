"""Oracle fixture for data-dependent-branch (TCF104): a test that only guards a masked write.

wav2vec2's contrastive loss masks the negatives that equal the positive:
`if neg_is_pos.any(): logits[1:][neg_is_pos] = float("-inf")`. Writing a number through an
all-False mask changes nothing, so with --unsafe-fixes tcfix drops the test and keeps the write:
3 graphs before (the forward up to the test, then one for each way it went), 1 after, outputs and
gradients equal. The inputs copy
the positive into one negative on every other call, so the mask is all False on some calls and not
on others.
"""
import torch
import torch.nn.functional as F
from torch import nn


class ContrastiveHead(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.project = nn.Linear(dim, dim)
        self.temperature = 0.1

    def forward(self, quantized: torch.Tensor, negatives: torch.Tensor) -> torch.Tensor:
        transformer_features = self.project(quantized)
        targets = torch.cat([quantized[None], negatives], dim=0)
        logits = torch.cosine_similarity(transformer_features[None].float(), targets.float(), dim=-1)
        logits = logits / self.temperature
        neg_is_pos = (quantized == negatives).all(-1)
        if neg_is_pos.any():
            logits[1:][neg_is_pos] = float("-inf")
        logits = logits.transpose(0, 2).reshape(-1, logits.size(0))
        target = torch.zeros(logits.shape[0], dtype=torch.long)
        return F.cross_entropy(logits, target, reduction="sum")


def step(copy_positive: bool):
    quantized = torch.randn(2, 5, 8)
    negatives = torch.randn(3, 2, 5, 8)
    if copy_positive:
        negatives[1, 0, 2] = quantized[0, 2]
    return quantized, negatives


def oracle_cases():
    batches = [step(copy_positive) for copy_positive in (False, True, False, True)]
    return [
        {
            "name": "inference",
            "factory": lambda: ContrastiveHead().eval(),
            "inputs": batches,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (3, 1), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": ContrastiveHead,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (3, 1), "eager_frames": (None, 0)},
        },
    ]
