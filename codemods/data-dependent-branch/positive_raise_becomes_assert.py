"""`if <tensor test>: raise E(...)` becomes `torch._assert_async`: string and f-string messages of
Python values (metadata and effect-free builtins: `tuple(x.shape)`, `len(t)`), no message (the
exception's name becomes the message), `if not` (no `logical_not`), a Python part kept as an `if`, a
message over several lines on lines of its own. And the raises tcfix leaves, each with its reason: a
message that formats a tensor, reads `.item()`, is computed or calls a method; `raise ... from`; an
`else`; an `or` test; two arguments."""
import torch
from torch import nn


class Config:
    vocab_size = 32


class Head(nn.Module):
    def __init__(self, config=Config()):
        super().__init__()
        self.config = config
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        if labels is not None and labels.max() >= self.config.vocab_size:
            raise ValueError(f"Label values must be <= vocab_size: {self.config.vocab_size}")
        if x.shape[0] > 1 and self.training and (x == 0).all():
            raise ValueError
        if not torch.isfinite(x).all():
            raise ValueError("non-finite input")
        if x.abs().max() > 1e4:
            raise RuntimeError(
                f"activations of shape {tuple(x.shape)} and dtype {x.dtype} overflow: "
                "lower the learning rate"
            )
        return self.proj(x)


class Refused(nn.Module):
    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        if lengths.min() == 0:
            raise ValueError(f"empty sequence in {lengths}")
        if x.sum() == 0:
            raise ValueError(f"all zeros: {x.sum().item()}")
        if lengths.max() > 100:
            raise ValueError("too long: {}".format(x.shape))
        if lengths.max() > 70:
            raise ValueError(f"too long: {self.describe(lengths)}")
        if lengths.max() > 50:
            raise ValueError(f"too long for {len(lengths)} sequences")
        if x.max() > 10:
            raise ValueError("too big") from None
        if x.min() < -10:
            raise ValueError("too small")
        else:
            x = x + 1
        if (x > 5).any() or (x < -5).any():
            raise ValueError("out of range")
        if x.mean() > 3:
            raise ValueError("mean", 3)
        return x

    def describe(self, lengths):
        return "some sequences"
