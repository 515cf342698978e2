"""TCF209 positive: the file's own check declares that its message may be a callable
(`message: str | Callable[[], str]`), as transformers' `torch_compilable_check` does, and calls it
only when the check fails. The Safe fix passes the message as `lambda: f"..."`: nothing is
formatted while the check holds, and under compile the check only tells the compiler. The
condition may read a tensor (the placeholder count of a vision-language model): the lambda leaves
the condition alone, where the other fix would branch on it."""
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


class WindowMixer(nn.Module):
    def __init__(self, window: int = 4, dim: int = 8):
        super().__init__()
        self.window = window
        self.mix = nn.Conv2d(dim, dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        require(H % self.window == 0, f"height {H} is not a multiple of the window {self.window}")
        return self.mix(x)


class ImageTokenMerger(nn.Module):
    """Puts image features where the text holds image tokens."""

    def __init__(self, image_token: int = 3):
        super().__init__()
        self.image_token = image_token

    def forward(self, ids: torch.Tensor, text: torch.Tensor, image: torch.Tensor) -> torch.Tensor:
        slots = ids == self.image_token
        require(slots.sum() * text.shape[-1] == image.numel(), f"{image.shape[0]} image features for the tokens")
        return text.masked_scatter(slots.unsqueeze(-1), image)
