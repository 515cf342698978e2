"""Oracle fixture for size-formatted-into-string (TCF209), the lambda fix.

A check whose signature takes its message as a string or a callable, and that under compile only
tells the compiler (the shape of transformers' `torch_compilable_check`), is given an f-string
that formats a size: Dynamo formats it before the call, which pins the size, and each new size
compiles its own graph. The Safe fix passes `lambda: f"..."`, which the check never calls while
it holds: 2 graphs for 5 sizes. A second case checks the placeholder count of a vision-language
model, a condition that reads a tensor: its graph break stays (another rule's), the pin goes
(5 prompts with 2 to 6 image features: 7 graphs and 6 breaks before, 4 and 3 after; the 3
recompiles on the number of image features are gone).
"""
from collections.abc import Callable

import torch
from torch import nn


def require(condition, message: str | Callable[[], str], error: type[Exception] = ValueError) -> None:
    """Raise `error` with `message` unless `condition` holds; under compile, only a hint."""
    if torch.compiler.is_compiling():
        if isinstance(condition, torch.Tensor):
            torch._check_tensor_all(condition)
        else:
            torch._check(condition)
        return
    if not condition:
        raise error(message() if callable(message) else message)


class PatchEmbed(nn.Module):
    def __init__(self, patch: int = 4, dim: int = 16):
        super().__init__()
        self.patch = patch
        self.proj = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        require(H % self.patch == 0, f"Input height ({H}) should be divisible by the patch ({self.patch}).")
        require(W % self.patch == 0, message=f"Input width ({W}) should be divisible by the patch ({self.patch}).")
        return self.proj(x).flatten(2).transpose(1, 2)


class ImageTokenMerger(nn.Module):
    """Puts image features where the text holds image tokens."""

    def __init__(self, image_token: int = 3, dim: int = 8):
        super().__init__()
        self.image_token = image_token
        self.embed = nn.Embedding(16, dim)

    def forward(self, ids: torch.Tensor, image: torch.Tensor) -> torch.Tensor:
        text = self.embed(ids)
        slots = ids == self.image_token
        require(
            slots.sum() * text.shape[-1] == image.numel(),
            f"Image features and image tokens do not match: features {image.shape[0]}",
        )
        return text.masked_scatter(slots.unsqueeze(-1), image)


def prompts():
    """A prompt of `n` image tokens between two text tokens, with `n` image features."""
    steps = []
    for n in (2, 3, 4, 5, 6):
        ids = torch.tensor([[1] + [3] * n + [2]])
        steps.append((ids, torch.randn(n, 8)))
    return steps


def oracle_cases():
    images = [(torch.randn(2, 3, size, size),) for size in (16, 20, 24, 28, 32)]
    return [
        {
            "name": "inference",
            "factory": lambda: PatchEmbed().eval(),
            "inputs": images,
            "no_grad": True,
            "expect": {"graphs": (5, 2), "recompiles": (4, 1), "graph_breaks": (0, 0)},
        },
        {
            "name": "training",
            "factory": PatchEmbed,
            "inputs": images,
            "train": True,
            "expect": {"graphs": (5, 2), "recompiles": (4, 1), "graph_breaks": (0, 0)},
        },
        {
            "name": "placeholder count",
            "factory": lambda: ImageTokenMerger().eval(),
            "inputs": prompts(),
            "no_grad": True,
            # The break on the tensor condition stays (one per graph); the recompiles on the
            # number of image features (a new size pinned each call) go.
            "expect": {
                "graphs": (7, 4),
                "recompiles": (5, 2),
                "recompiles matching 'image' size": (3, 0),
                "graph_breaks": (6, 3),
            },
        },
    ]
