"""A debug option of a training config, off by default (`save_steps: Optional[list] = None`), that
the trainer holds as `self.cfg` (a dataclass field annotated with the config class: the annotation,
not the name, says it is the config). The hook that logs is registered only past the early return
on that option, so its finding is low and names it. A trainer whose `cfg` is annotated with
something else keeps the finding's severity."""
import logging
from dataclasses import dataclass
from typing import Any, List, Optional

from torch import nn

log = logging.getLogger(__name__)


@dataclass
class RunConfig:
    save_steps: Optional[List[int]] = None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@dataclass
class Trainer:
    cfg: RunConfig
    model: Net
    step: int = 0

    def output_hooks(self):
        if self.cfg.save_steps is None or self.step not in self.cfg.save_steps:
            return []

        def save_output(module, args, output):
            log.info("output of %s", module)

        return [layer.register_forward_hook(save_output) for layer in self.model.layers]


@dataclass
class Probe:
    cfg: Any
    model: Net

    def output_hooks(self):
        if self.cfg.save_steps is None:
            return []

        def show_output(module, args, output):
            log.info("output of %s", module)

        return [layer.register_forward_hook(show_output) for layer in self.model.layers]
