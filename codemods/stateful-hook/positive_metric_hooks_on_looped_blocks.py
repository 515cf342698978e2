"""stateful-hook (TCF202), closure form, on blocks called in a loop: no fix (issue #27).

A residual MLP for tabular data; the training script attaches forward hooks to every block that record
activation norms, but only while the metrics collector says so (the loop turns
`capture_activation_norms` on every N steps). The hooks are traced with the forward, and Dynamo guards
on the flag read through the closure: every flip fails the guard and recompiles. tcfix once decorated
the hook with `@torch.compiler.disable`; on blocks that forward calls in a loop, that graph break
makes Dynamo skip the whole forward, worse than the recompiles. No fix now: the finding says how to
keep forward in one graph (the flag tests taken out of the hook).
"""
import torch
import torch.nn.functional as F
from torch import nn


class ResidualMLPBlock(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class ResidualMLP(nn.Module):
    def __init__(self, in_features: int = 20, dim: int = 64, depth: int = 4, num_classes: int = 3):
        super().__init__()
        self.embed = nn.Linear(in_features, dim)
        self.blocks = nn.ModuleList([ResidualMLPBlock(dim, 2 * dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, features):
        x = self.embed(features)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


class MetricsCollector:
    """Training-loop metrics; activation norms are expensive, so they are only captured on some steps."""

    def __init__(self):
        self.capture_activation_norms = False
        self.norms: list[tuple[int, float]] = []


def attach_activation_norm_hooks(model: ResidualMLP, collector: MetricsCollector):
    handles = []
    for index, block in enumerate(model.blocks):

        def hook(module, inputs, output, index=index):
            if collector.capture_activation_norms:
                collector.norms.append((index, output.detach().norm().item()))

        handles.append(block.register_forward_hook(hook))
    return handles


def _model_with_hooks():
    model = ResidualMLP()
    model.metrics = MetricsCollector()  # where the training loop (and the oracle) can reach it
    attach_activation_norm_hooks(model, model.metrics)
    return model


def _step(batch, capture: bool):
    def step(model):
        model.metrics.capture_activation_norms = capture
        return (batch,)

    return step
