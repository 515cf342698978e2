# CRLF line endings (a file written on Windows). The guard line and the re-indented continuation
# lines of the multi-line call must end in \r\n like the rest of the file.
# tcfix: TCF101 (high) twice, both guarded; no bare \n in the result.
import torch
from torch import nn


class Upsample(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels * 4, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x):
        print("Upsample input", x.shape)
        y = self.shuffle(self.conv(x))
        print(
            "Upsample output",
            y.shape,
        )
        return y
