"""Oracle fixture for module-created-in-forward (TCF206).

A small VQGAN-style encoder whose downsampling layer builds its asymmetric padding module in
`forward` (`self.pad = nn.ZeroPad2d((0, 1, 0, 1))`). The new attribute fails a guard on the second
call and Dynamo recompiles once. tcfix moves the construction to the end of `__init__`; ZeroPad2d has
no parameters and no train/eval behaviour, so the fix is safe.
"""
import torch
import torch.nn as nn


class Downsample(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, stride=2, padding=0)

    def forward(self, x):
        self.pad = nn.ZeroPad2d((0, 1, 0, 1))
        x = self.pad(x)
        return self.conv(x)


class Encoder(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.down1 = Downsample(channels)
        self.down2 = Downsample(channels)
        self.out = nn.Conv2d(channels, 4, 1)

    def forward(self, x):
        return self.out(self.down2(torch.relu(self.down1(self.stem(x)))))


def oracle_cases():
    images = [(torch.randn(2, 3, 16, 16),) for _ in range(4)]
    return [
        {"name": "inference", "factory": lambda: Encoder().eval(), "inputs": images,
         "expect": {"recompiles": (">=1", 0)}},
        {"name": "training", "factory": Encoder, "inputs": images, "train": True, "atol": 1e-5,
         "expect": {"recompiles": (">=1", 0)}},
    ]
