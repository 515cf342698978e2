"""Stages of blocks whose mixer calls an `nn.LSTM`: Dynamo breaks the graph at the LSTM, runs the
calls above it eagerly, and compiles each stage's `forward` as a frame of its own. The stages
differ (the first has no downsampling), so that frame recompiles on the submodule's type: a
recompile that exists only because of the break. tests/evidence/check.py pins the lines."""
import torch
from torch import nn


class Mixer(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.rnn = nn.LSTM(dim, dim, batch_first=True)

    def forward(self, x):
        x, _ = self.rnn(x)
        return x


class Stage(nn.Module):
    def __init__(self, dim: int, downsample: bool):
        super().__init__()
        self.downsample = nn.Linear(dim, dim) if downsample else nn.Identity()
        self.mixer = Mixer(dim)

    def forward(self, x):
        x = self.downsample(x)
        return self.mixer(x)


class StagedNet(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.stages = nn.Sequential(Stage(dim, False), Stage(dim, True))

    def forward(self, x):
        return self.stages(x)


def main():
    torch.manual_seed(0)
    model = torch.compile(StagedNet().eval(), backend="eager")
    with torch.no_grad():
        model(torch.randn(2, 4, 8))


if __name__ == "__main__":
    main()
