"""A hook that reads a module-level scale which a setup function declares `global` but only
reads: nothing assigns it again and nothing writes into it, so the value the hook sees never
changes and Dynamo's guard on it never fails. No TCF202 (it used to be called "reassigned")."""
import torch
from torch import nn

SCALE = 0.5


def describe_scale():
    global SCALE
    return f"scale={SCALE}"


def attach(module: nn.Module):
    def hook(mod, inputs, output):
        return output * SCALE

    module.register_forward_hook(hook)


net = nn.Linear(4, 4)
attach(net)
compiled = torch.compile(net)
