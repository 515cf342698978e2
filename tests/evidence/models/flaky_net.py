"""A model with the hazards a training loop hits: a print, a data-dependent branch and a flag
the loop flips from outside (no rule sees that one), and a step counter kept in forward (TCF203).
tests/evidence/check.py pins where each one is; keep the lines in step with it."""
import torch
from torch import nn


class FlakyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.use_bias = False

    def forward(self, x):
        if x.dtype == torch.float64:
            print("double input")  # the run feeds float32: tcfix finds it, the run does not see it
        x = self.linear(x)
        print("hidden", x.shape)
        if x.sum() > 0:
            x = x * 2
        if self.use_bias:
            x = x + 1
        return x


class StepNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = 0

    def forward(self, x):
        self.steps += 1
        return x / self.steps


def main():
    torch.manual_seed(0)
    net, norm = FlakyNet(), StepNorm()
    compiled_net = torch.compile(net, backend="eager")
    compiled_norm = torch.compile(norm, backend="eager")
    for step in range(4):
        net.use_bias = step % 2 == 1
        compiled_norm(compiled_net(torch.randn(2, 4)))


if __name__ == "__main__":
    main()
