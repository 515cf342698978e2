"""A test module (pytest collects `*_test.py`; it holds a `test_*` function and imports nothing
that compiles) with a plain reference model its test runs eagerly. Only another file compiling
the model (a runner the test hands it to) would trace the `print`, and a run over part of the
project cannot tell: the finding stays, low, and says so."""
import pytest
import torch
from torch import nn


class ReferenceMixer(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        print("reference mixer input", x.shape)
        return torch.tanh(self.proj(x))


@pytest.mark.parametrize("width", [4, 8])
def test_reference_mixer_keeps_shape(width):
    model = ReferenceMixer(width)
    assert model(torch.randn(2, width)).shape == (2, width)
