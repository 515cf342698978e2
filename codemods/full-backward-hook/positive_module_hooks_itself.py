"""TCF110 positive: a module registers a full backward hook on itself and on a submodule to track
gradient norms. Every torch.compile of it breaks at the hooked module (GB0083)."""
import torch
from torch import nn


class GradTrackedMLP(nn.Module):
    def __init__(self, dim: int = 32):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.grad_norms = []
        self.register_full_backward_hook(self._record)
        self.fc1.register_full_backward_pre_hook(lambda module, grad_output: None)

    def _record(self, module, grad_input, grad_output):
        self.grad_norms.append(grad_output[0].norm())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))
