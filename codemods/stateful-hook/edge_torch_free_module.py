"""TCF202 edge: a metrics module that keeps torch out of its import (it imports nothing from torch).

`attach` registers a hook defined inside it: its fix puts `import torch` first in `attach`, where the
decorator runs, and stays Safe. `module_level_hook` is defined at module level, where only a
module-level `import torch` would make the decorator work: that would make importing this module
load torch, so the fix is Unsafe and says why.
"""


class Collector:
    def __init__(self):
        self.enabled = False
        self.outputs = []


COLLECTOR = Collector()


def attach(model, collector):
    def hook(module, inputs, output):
        if collector.enabled:
            collector.outputs.append(output.detach())

    return model.register_forward_hook(hook)


def module_level_hook(module, inputs, output):
    if COLLECTOR.enabled:
        COLLECTOR.outputs.append(output.detach())


def attach_global(model):
    return model.register_forward_hook(module_level_hook)


def start_collecting():
    COLLECTOR.enabled = True
