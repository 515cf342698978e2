"""TCF209 edge for the lambda fix: the message passed by keyword, an implicitly joined message
over several lines (the lambda takes the whole of it), a check inside an expression (the other
fix needs a statement of its own), a message that calls a method (Unsafe: the call now runs only
when the check fails), and one that binds a name (`:=`, no fix: it would be bound in the lambda).
The keyword must be the parameter that takes a callable: `note=` does not."""
from typing import Callable, Optional, Union

import torch
from torch import nn


def expect(condition, msg: Optional[Callable[[], str]] = None, *, note: str = "") -> bool:
    """Raise with `msg()` unless `condition` holds; returns whether it held."""
    if not condition:
        raise ValueError((msg() if msg is not None else "check failed") + note)
    return True


def expect_either(condition, msg: Union[str, Callable[..., str]]) -> None:
    """Raise with the message unless `condition` holds."""
    if not condition:
        raise ValueError(msg() if callable(msg) else msg)


class Tiles(nn.Module):
    def __init__(self, tile: int = 4):
        super().__init__()
        self.tile = tile

    def describe(self) -> str:
        return f"tiles of {self.tile}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        expect(H % self.tile == 0, msg=f"height {H} is not a multiple of {self.tile}")
        expect_either(
            W % self.tile == 0,
            f"width {W} is not a multiple "
            f"of the tile {self.tile}",
        )
        ok = expect(H > 0, f"{H} rows") and expect(W > 0, f"{W} columns, {self.describe()}")
        expect(H < 4096, f"{(rows := H)} rows at most 4096")
        expect(W < 4096, note=f"width {W}")
        return x * ok
