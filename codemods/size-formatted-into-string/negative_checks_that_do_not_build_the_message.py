"""TCF209 negative: messages passed to checks that do not build them under compile. A check
imported from outside the project (transformers' `torch_compilable_check` hands Dynamo the
condition alone when tracing), a function of the file that only logs its message when the
condition fails, and one that ignores it: Dynamo builds an f-string only when something reads it
(measured: an f-string passed to a function that ignores it gives 2 graphs for 5 sizes, as
without it)."""
import torch
from torch import nn
from transformers.utils import torch_compilable_check


def expect(condition: bool, message: str) -> bool:
    return bool(condition)


class Merge(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, image_features: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        n_features = image_features.shape[0]
        torch_compilable_check(tokens.shape[1] == n_features, f"{n_features} features for {tokens.shape[1]} tokens")
        expect(n_features > 0, f"no features in a batch of {image_features.shape[0]}")
        return self.proj(image_features)
