# A library binds `torch.compiler.disable` to a name of its own, with a no-op fallback for old
# torch versions, and decorates a method with that name: Dynamo does not trace the method, so the
# print in it (and in the helper only it calls) is not in the compiled code.
# tcfix: no TCF101 finding.
import torch
from torch import nn


def _passthrough(fn):
    return fn


skip_compile = getattr(getattr(torch, "compiler", None), "disable", None) or _passthrough


def _report(sizes):
    print("grid sizes:", sizes)


class PatchPositions(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.table = nn.Parameter(torch.zeros(1, 64, dim))

    @skip_compile
    def _add_positions(self, x: torch.Tensor, sizes: list) -> None:
        _report(sizes)
        x.add_(self.table[:, : x.shape[1]])

    def forward(self, x: torch.Tensor, sizes: list) -> torch.Tensor:
        self._add_positions(x, sizes)
        return x
