"""TCF209 positive: Dynamo joins an f-string's pieces where the line runs, whoever reads it, so
each of these pins the size it formats (measured under torch 2.15: 5 graphs for 5 sizes, against
2). A check imported from outside the project (transformers' `torch_compilable_check`, which
hands Dynamo the condition alone when tracing) and a function of the file that ignores the
message get an Unsafe fix: tcfix does not know them to do nothing when the condition holds. A
string never read pins all the same; `H == W` ties two sizes without pinning either."""
import torch
from torch import _assert, nn
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
        label = f"batch of {n_features}"
        return self.proj(image_features)


class Square(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        _assert(H == W, f"expected a square image, got {H}x{W}")
        return x.flip(-1)
