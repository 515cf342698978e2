"""TCF202 positive: a watcher walks `model.named_modules()` and calls its own `_attach` for each,
and `_attach` registers the hook. No registration sits in a loop, but the helper runs in one, so
the hook lands on every module, blocks that forward runs in a loop among them. Measured under
torch 2.15 on a four-block model: with `@torch.compiler.disable` on the hook (the Safe fix tcfix
used to offer here) no graph held the blocks' layers any more (graphs of 1 and 2 ops; forward
ran eagerly), where without it forward was one 52-op graph plus one recompile when the flag flips.

tcfix should report the read of `self.paused` with no `torch.compiler.disable` fix.
"""
import torch
from torch import nn


class PeakWatch:
    def __init__(self, model: nn.Module):
        self.paused = False
        self.peak = torch.zeros(())
        for _, module in model.named_modules():
            self._attach(module)

    def _attach(self, module: nn.Module):
        module.register_forward_hook(self._on_forward)

    def _on_forward(self, module, inputs, output):
        if not self.paused:
            self.peak.copy_(torch.maximum(self.peak, output.detach().abs().amax()))

    def pause(self):
        self.paused = True
