"""TCF110 negative (trimmed from torch/testing/_internal/distributed/distributed_test.py): one
test registers a legacy backward hook on models it never compiles; another function of the same
file compiles a different model. Only a compile in the same function counts."""
import torch
from torch import nn


class DummyTestModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)


def test_hooks_match_local_model():
    def celu_hook(module, _input, output):
        return (nn.functional.celu(output[0]),)

    local_model = DummyTestModel()
    local_model.fc.register_backward_hook(celu_hook)
    return local_model(torch.randn(2, 2))


def test_compiled_model():
    model = torch.compile(DummyTestModel())
    return model(torch.randn(2, 2))
