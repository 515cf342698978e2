"""TCF202 positive: the hook reads no state itself; it calls module-level helpers —
`capture_enabled()` returns `CAPTURE.on`, a flag the training loop flips, and `store_capture()`
appends to `CAPTURE.buffer`.

Dynamo inlines the helpers into the traced hook and guards on `CAPTURE.on` all the same; each flip
recompiles. tcfix should report the hook and offer `@torch.compiler.disable` above `def capture_hook`.
"""
import torch
from torch import nn


class CaptureSwitch:
    def __init__(self):
        self.on = False
        self.buffer: list[torch.Tensor] = []


CAPTURE = CaptureSwitch()


def capture_enabled() -> bool:
    return CAPTURE.on


def store_capture(output: torch.Tensor) -> None:
    CAPTURE.buffer.append(output.detach())


def capture_hook(module: nn.Module, inputs, output: torch.Tensor):
    if capture_enabled():
        store_capture(output)


def attach(model: nn.Module) -> None:
    for block in model.children():
        block.register_forward_hook(capture_hook)
