"""A feature-capture hook that stores each block's output in a module-level registry, which a
helper (declaring it `global` without need) fills and a reset function empties. Nothing rebinds
the registry: it is only written into. Dynamo still guards on its contents (measured under torch
2.15: `not G['registry']`, then `len(G['registry']) == 1`), so each change of its items
recompiles. The message must say what the code does: the dict is written into, not reassigned."""
import torch
from torch import nn

registry = {}


def remember(name, value):
    global registry
    registry[name] = value


def forget():
    global registry
    registry.clear()


def capture(module: nn.Module):
    def hook(mod, inputs, output):
        registry["last"] = output.detach()
        return output

    return module.register_forward_hook(hook)


net = nn.Linear(4, 4)
capture(net)
compiled = torch.compile(net)
