"""TCF111 negative: cells trace (nn.LSTMCell is a plain module to Dynamo), and an LSTM that only a
method compiled code never reaches calls is not reported."""
import torch
from torch import nn


class Stepper(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.cell = nn.LSTMCell(dim, dim)
        self.offline = nn.LSTM(dim, dim, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, c = self.cell(x[:, 0])
        h, c = self.cell(x[:, 1], (h, c))
        return h

    def export_sequence_states(self, x):
        states, _ = self.offline(x)
        return states
