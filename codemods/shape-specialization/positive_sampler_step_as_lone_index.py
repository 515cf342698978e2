"""A diffusion sampler calls the compiled denoiser once per step with the step's number, and the
denoiser reads its noise level as a lone index of a 1-D buffer (`self.sigmas[t]`). A lone int
index is traced as a slice bound is: the first new `t` compiles a second graph, then `t` is
dynamic (measured under torch 2.15: 2 graphs over 12 steps, 1 with `dynamic=True`). Beside other
indexes (`self.keys[:, i]`) Dynamo guards on its value instead, `dynamic=True` too: 8 graphs, then
eager (`positive_index_advanced_by_enumerate.py`). A sampler has no prefill, so the message leaves
the decode caveat out."""
import torch
from torch import nn


class Denoiser(nn.Module):
    def __init__(self, width: int = 8, steps: int = 50):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.register_buffer("sigmas", torch.linspace(1, 0, steps))

    def forward(self, x, t: int):
        return x - self.sigmas[t] * self.proj(x)


@torch.no_grad()
def sample(x, steps: int = 12):
    model = torch.compile(Denoiser())
    for t in range(steps):
        x = model(x, t)
    return x
