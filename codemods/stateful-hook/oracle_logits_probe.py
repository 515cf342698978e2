"""Oracle fixture for stateful-hook (TCF202), the safe form: one hook, on one module.

A small image classifier whose head is watched by a probe that keeps the logits' entropy while
`probe.active` is on (evaluation steps only). The hook is registered once, on the head, which
`forward` calls once (not in a loop), so `@torch.compiler.disable` costs a single graph break per
call and tcfix applies it without `--unsafe-fixes`. Before: each new value of the flag compiles
another version of `forward`.
"""
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, in_features: int = 32, hidden: int = 64, classes: int = 10):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.body(x))


class EntropyProbe:
    def __init__(self):
        self.active = False
        self.entropies = []


def watch_head(model: Classifier, probe: EntropyProbe):
    def record_entropy(module, inputs, logits):
        if probe.active:
            p = logits.softmax(-1)
            probe.entropies.append(-(p * p.clamp_min(1e-9).log()).sum(-1).mean().detach())

    return model.head.register_forward_hook(record_entropy)


def _probed_model():
    model = Classifier()
    model.probe = EntropyProbe()
    watch_head(model, model.probe)
    return model


def _step(x, active: bool):
    def step(model):
        model.probe.active = active
        return (x,)

    return step


def oracle_cases():
    batches = [torch.randn(8, 32) for _ in range(6)]
    active = [False, True, False, True, False, True]
    return [
        {
            "name": "eval-steps-toggle-the-probe",
            "factory": _probed_model,
            "inputs": [_step(x, a) for x, a in zip(batches, active)],
            "observe": lambda model: model.probe.entropies,
            "train": True,
            "expect": {
                "recompiles matching active": (">=1", 0),
                "recompiles": (">=1", 0),
                # The hook now runs eagerly: one break per call, the rest stays compiled.
                "eager_frames": (None, 0),
            },
        },
    ]
