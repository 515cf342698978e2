import torch
import torch.nn as nn


class Downsample(nn.Module):
    """Pads on the right and bottom, then a stride-2 conv (as in VQGAN encoders)."""

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, stride=2, padding=0)

    def forward(self, x):
        self.pad = nn.ZeroPad2d((0, 1, 0, 1))
        x = self.pad(x)
        return self.conv(x)
