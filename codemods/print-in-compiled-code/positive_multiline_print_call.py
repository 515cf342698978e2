# A print call that spans several lines: every continuation line must move one level in.
# tcfix: TCF101 (high), fix wraps the whole call.
import torch
from torch import nn


class ConvBlock(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        print(
            "ConvBlock",
            tuple(x.shape),
            "->",
            tuple(y.shape),
            sep=" ",
        )
        return y
