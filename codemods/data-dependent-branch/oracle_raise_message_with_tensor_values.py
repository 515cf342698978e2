"""Oracle fixture for data-dependent-branch (TCF104): a raise whose message formats tensor values.

A placeholder merge shaped like transformers' image-token checks (glm_image: `if n_placeholder_tokens
!= n_image_tokens: raise ValueError(f"... ({n_placeholder_tokens.item()}) ... ({n_image_tokens})")`)
and encodec's overlap-add (`if sum_weight.min() == 0: raise ValueError(f"... {sum_weight}")`). Each
`if` breaks the graph, and so would formatting the tensors inside `_assert_async`: with
--unsafe-fixes tcfix writes the assertion with the tensor fields as placeholders naming them
(`<n_placeholder_tokens.item()>`), Python fields (`{n_image_tokens}`, a size) kept: one graph,
outputs and gradients equal to the original's eager ones.

The failing side, measured under torch 2.15 on CPU with the fixed function: a mismatch raises
RuntimeError with the placeholder message both eagerly and compiled, as the fix title says.
"""
import torch
from torch import nn


class PlaceholderMerge(nn.Module):
    def __init__(self, dim: int = 8, image_token_id: int = 3):
        super().__init__()
        self.image_token_id = image_token_id
        self.proj = nn.Linear(dim, dim)

    def forward(self, input_ids: torch.Tensor, image_embeds: torch.Tensor, sum_weight: torch.Tensor):
        special_image_mask = input_ids == self.image_token_id
        n_placeholder_tokens = special_image_mask.sum()
        n_image_tokens = image_embeds.shape[0]
        if n_placeholder_tokens != n_image_tokens:
            raise ValueError(
                f"Number of image placeholder tokens ({n_placeholder_tokens.item()}) does not match "
                f"number of image embeddings ({n_image_tokens})"
            )
        if sum_weight.min() == 0:
            raise ValueError(f"`sum_weight` minimum element must be bigger than zero: {sum_weight}")
        return self.proj(image_embeds).sum() / sum_weight


def oracle_cases():
    def batch():
        input_ids = torch.tensor([[1, 3, 3, 2], [3, 1, 2, 2]])
        return input_ids, torch.randn(3, 8), torch.rand(4) + 0.5

    batches = [batch() for _ in range(3)]
    return [
        {
            "name": "inference",
            "factory": lambda: PlaceholderMerge().eval(),
            "inputs": batches,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (3, 1), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": PlaceholderMerge,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (3, 1), "eager_frames": (None, 0)},
        },
    ]
