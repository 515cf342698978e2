"""TCF202 positive: a debugging helper registers its hook on every submodule with
`model.apply(self._register)` (the shape of transformers' `DebugUnderflowOverflow`).

No registration sits in a loop, but `Module.apply` runs the registering method on every module,
blocks that forward runs in a loop among them: `@torch.compiler.disable` on the hook puts a graph
break in that loop, and Dynamo runs the whole forward eagerly. So the fix is Unsafe.
"""
from torch import nn


class ActivationWatch:
    def __init__(self, model: nn.Module):
        self.model = model
        self.batch_number = 0
        self.largest = {}
        self.model.apply(self._register)

    def _register(self, module):
        module.register_forward_hook(self.record)

    def record(self, module, inputs, output):
        if self.batch_number % 100 == 0:
            self.largest[id(module)] = output.detach().abs().max()

    def step(self):
        self.batch_number += 1
