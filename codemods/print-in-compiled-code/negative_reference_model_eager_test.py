"""A test file (pytest collects `test_*.py` and `*_test.py`) holding a plain reference model that
the test compares the library's layer against, eagerly: nothing in the project compiles it, so
its `print` breaks no graph and tcfix says nothing. (Were another test of the project to call
`torch.compile`, a shared test module could hold what it compiles, and this would be reported.)"""
import torch
from torch import nn


class ReferenceMixer(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        print("reference mixer input", x.shape)
        return torch.tanh(self.proj(x))


def test_reference_mixer_keeps_shape():
    model = ReferenceMixer(8)
    assert model(torch.randn(2, 8)).shape == (2, 8)
