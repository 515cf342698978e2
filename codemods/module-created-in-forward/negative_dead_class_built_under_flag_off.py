# A padding module built lazily in its forward, but the class is only ever returned by a factory
# under a module flag that is off and that nothing sets: no model holds it, its forward never
# runs (real shape: an export-only "same"-padding conv chosen under `_USE_EXPORT_CONV = False`).
# tcfix: no TCF206 finding.
import torch
from torch import nn
import torch.nn.functional as F

_EXPORT_FRIENDLY = False


class ExportPadConv(nn.Conv2d):
    def __init__(self, channels: int, kernel: int):
        super().__init__(channels, channels, kernel)
        self.pad = None

    def forward(self, x):
        if self.pad is None:
            self.pad = nn.ZeroPad2d(self.kernel_size[0] // 2)
        return F.conv2d(self.pad(x), self.weight, self.bias)


class PadConv(nn.Conv2d):
    def forward(self, x):
        k = self.kernel_size[0] // 2
        return F.conv2d(F.pad(x, (k, k, k, k)), self.weight, self.bias)


def make_conv(channels: int, kernel: int) -> nn.Module:
    if _EXPORT_FRIENDLY and torch.jit.is_scripting():
        return ExportPadConv(channels, kernel)
    return PadConv(channels, kernel)


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = make_conv(16, 3)

    def forward(self, x):
        return self.conv(x)
