"""A training step whose masked write fails in the backend, not in Dynamo: the backward of
`frames[spans] = filler` needs `nonzero`, AOTAutograd cannot compile it, and Dynamo logs the
failure where the failing graph starts (the line it resumed at after the earlier graph break),
not at the write. tcfix joins it to the write's TCF105. tests/evidence/check.py pins the lines."""
import torch
from torch import nn


class FrameMasker(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.filler = nn.Parameter(torch.randn(dim))

    def forward(self, frames):
        frames = self.proj(frames)
        spans = frames.sum(-1).tolist()
        spans = torch.tensor(spans, dtype=torch.float32) > 0
        spans = torch.tensor(spans, dtype=torch.bool)
        frames[spans] = self.filler
        return frames


def main():
    torch.manual_seed(0)
    model = torch.compile(FrameMasker().train(), backend="aot_eager")
    for _ in range(2):
        model(torch.randn(2, 16, 8)).sum().backward()


if __name__ == "__main__":
    main()
