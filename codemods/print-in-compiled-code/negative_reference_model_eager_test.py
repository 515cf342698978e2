"""A test module (pytest collects `*_test.py`, and it holds a `test_*` function) with a plain
reference model its test checks eagerly: nothing in the project compiles anything, so the model
runs eagerly, its `print` breaks no graph, and tcfix says nothing. (Were any file of the project to
compile, or to run `torch._dynamo.explain`, this model could be what it compiles, and it would be
reported.)"""
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
