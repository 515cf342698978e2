"""TCF301 negative: hooks registered after `torch.compile` but before the first call are honoured
(measured); `model.compile()` honours hooks added later; a hook on the compiled wrapper itself runs
outside the compiled frame."""
import torch
from torch import nn


def setup(model: nn.Module, batch):
    compiled = torch.compile(model)
    model.head.register_forward_hook(lambda m, i, o: None)
    compiled(batch)
    compiled.register_forward_hook(lambda m, i, o: None)
    return compiled


def setup_in_place(model: nn.Module, batch):
    model.compile()
    model(batch)
    model.head.register_forward_hook(lambda m, i, o: None)
    return model
