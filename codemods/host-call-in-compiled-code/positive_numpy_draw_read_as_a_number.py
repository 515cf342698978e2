"""TCF107 positive: `np.random.rand(1)` is traced as a tensor, but reading its value with
`.item()` breaks the graph like a scalar draw (GB0033, measured under torch 2.15)."""
import numpy as np
import torch


def span_mask(lengths: torch.Tensor, prob: float = 0.1) -> torch.Tensor:
    epsilon = np.random.rand(1).item()
    spans = int(prob * lengths.shape[-1] + epsilon)
    return torch.arange(lengths.shape[-1]) < spans


compiled = torch.compile(span_mask)
