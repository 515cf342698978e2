import warnings

import torch
from torch import nn
from torch.nn import functional as F


class TDNNLayer(nn.Module):
    """Trimmed from transformers' wav2vec2 TDNNLayer and Wav2Vec2ForXVector."""

    def __init__(self, dim: int, kernel_size: int):
        super().__init__()
        self.kernel = nn.Linear(dim * kernel_size, dim)
        self.kernel_size = kernel_size

    def forward(self, hidden_states):
        if hidden_states.shape[1] < self.kernel_size:
            warnings.warn("TDNNLayer: the sequence is shorter than the kernel.")
        weight = self.kernel.weight.view(self.kernel.out_features, self.kernel_size, -1).transpose(1, 2)
        hidden_states = F.conv1d(hidden_states.transpose(1, 2), weight, self.kernel.bias, padding="same")
        return torch.relu(hidden_states.transpose(1, 2))


class XVector(nn.Module):
    def __init__(self, dim: int, kernels=(5, 3, 3)):
        super().__init__()
        tdnn_layers = [TDNNLayer(dim, kernel) for kernel in kernels]
        self.tdnn = nn.ModuleList(tdnn_layers)

    def forward(self, hidden_states):
        for tdnn_layer in self.tdnn:
            hidden_states = tdnn_layer(hidden_states)
        return hidden_states.mean(dim=1)
