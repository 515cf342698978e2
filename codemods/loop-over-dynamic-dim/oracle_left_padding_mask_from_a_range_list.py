"""Oracle fixture for loop-over-dynamic-dim (TCF204): a list built from `range` of an input size.

A left-padding mask built the way CPM-Ant builds it: `torch.tensor(list(range(seqlen - prompt))
[::-1])`. Python makes one number per position, so Dynamo makes the sequence length a constant:
each of 5 lengths compiles its own graph. The fix builds the same tensor with `torch.arange(…)
.flip(0)`, which keeps the length symbolic: 2 graphs (the first length, then one for all others),
outputs and gradients equal. The fix is Unsafe: for an empty range `torch.tensor([])` is float32
where `torch.arange` gives int64 (not met here: the length always exceeds the prompt). With a
`dtype=` the two are the same tensor for every length: `Positions`' fix is Safe.
"""
import torch
from torch import nn


class LeftPaddedEncoder(nn.Module):
    def __init__(self, prompt_length: int = 2, dim: int = 8):
        super().__init__()
        self.prompt_length = prompt_length
        self.proj = nn.Linear(dim, dim)

    def _prepare_attention_mask(self, hidden, length):
        batch = hidden.size(0)
        seqlen = hidden.size(1)
        device = hidden.device
        mask_1d = (
            torch.tensor(list(range(seqlen - self.prompt_length))[::-1], device=device)[None, :].repeat(batch, 1)
            < length[:, None]
        )
        prompt = torch.ones(batch, self.prompt_length, device=device).bool()
        return torch.cat((prompt, mask_1d), dim=1)

    def forward(self, hidden, length):
        mask = self._prepare_attention_mask(hidden, length)
        return self.proj(hidden) * mask[..., None]


class Positions(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, hidden):
        positions = torch.tensor(list(range(hidden.shape[1])), dtype=hidden.dtype, device=hidden.device)
        return hidden * self.scale + positions[None, :, None]


def oracle_cases():
    steps = [(torch.randn(2, n, 8), torch.tensor([1, n - 3])) for n in (5, 6, 7, 8, 9)]
    hidden = [(torch.randn(2, n, 8),) for n in (5, 6, 7, 8, 9)]
    return [
        {
            "name": "positions (safe) inference",
            "factory": lambda: Positions().eval(),
            "inputs": hidden,
            "no_grad": True,
            "expect": {"graphs": (5, 2), "recompiles": (4, 1), "graph_breaks": (0, 0)},
        },
        {
            "name": "positions (safe) training",
            "factory": Positions,
            "inputs": hidden,
            "train": True,
            "expect": {"graphs": (5, 2), "recompiles": (4, 1), "graph_breaks": (0, 0)},
        },
        {
            "name": "inference",
            "factory": lambda: LeftPaddedEncoder().eval(),
            "inputs": steps,
            "no_grad": True,
            "unsafe_fixes": True,
            "expect": {"graphs": (5, 2), "recompiles": (4, 1), "graph_breaks": (0, 0)},
        },
        {
            "name": "training",
            "factory": LeftPaddedEncoder,
            "inputs": steps,
            "train": True,
            "unsafe_fixes": True,
            "expect": {"graphs": (5, 2), "recompiles": (4, 1), "graph_breaks": (0, 0)},
        },
    ]
