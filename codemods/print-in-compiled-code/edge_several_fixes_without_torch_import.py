# Several prints in a file that does not bind the name `torch` (`import torch.nn as nn` binds only
# `nn`). Every fix needs `import torch`; it must be added exactly once.
# tcfix: 3 findings, all guarded, one `import torch` added.
import torch.nn as nn
import torch.nn.functional as F


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int, reduction: int = 4):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, channels // reduction, 1)
        self.fc2 = nn.Conv2d(channels // reduction, channels, 1)

    def forward(self, x):
        print("SE input", x.shape)
        s = F.adaptive_avg_pool2d(x, 1)
        print("SE squeezed", s.shape)
        s = F.hardsigmoid(self.fc2(F.relu(self.fc1(s))))
        print("SE scale", s.mean())
        return x * s
