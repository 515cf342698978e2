"""A counter behind an attribute that `__init__` leaves None and that only `set_extra_state` sets:
no code of the project calls that method by name, but torch's `load_state_dict` does, so the
branch runs after a checkpoint is loaded and the counter recompiles."""
import torch
from torch import nn


class Calibrated(nn.Module):
    def __init__(self):
        super().__init__()
        self.uses = 0
        self.calibration = None

    def set_extra_state(self, state):
        self.calibration = state

    def get_extra_state(self):
        return self.calibration

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.calibration is not None:
            self.uses += 1
        return x * 2
