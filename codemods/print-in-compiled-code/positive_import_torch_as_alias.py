# `import torch as T`: the fix must write `T.compiler.is_compiling()`, not `torch.`.
# tcfix: TCF101 (high), fix guards the print with `if not T.compiler.is_compiling():`.
import torch as T
import torch.nn as nn


class Residual(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fn = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim))

    def forward(self, x):
        out = x + self.fn(x)
        print("residual norm", T.linalg.vector_norm(out))
        return out
