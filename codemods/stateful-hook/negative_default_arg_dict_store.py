"""TCF202 negative: hooks registered in a loop capture the layer name through a default argument and
store the output into a dict from the enclosing scope (`activations[name] = o.detach()`). A store into
a captured dict is not a read of mutable state that Dynamo would guard on, and `name` is bound per hook.

tcfix should report nothing for TCF202.
"""
import torch
from torch import nn


def capture_activations(model: nn.Module, layer_types=(nn.Linear,)) -> dict[str, torch.Tensor]:
    activations: dict[str, torch.Tensor] = {}
    for name, module in model.named_modules():
        if isinstance(module, layer_types):

            def hook(m, i, o, name=name):
                activations[name] = o.detach()

            module.register_forward_hook(hook)
    return activations
