import torch.nn as nn


class Up(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        self.up = nn.Upsample(scale_factor=self.scale, mode="nearest")  # resample
        return self.up(x)
