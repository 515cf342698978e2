"""A counter that only runs while an attribute is set that `__init__` leaves None and that only a
method nothing calls sets (the shape of sew_d's `StableDropout`, whose `init_context` nothing in
transformers calls): the counter never runs, so nothing recompiles and nothing is reported."""
import torch
from torch import nn


class SharedDropout(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
        self.uses = 0
        self.masks = None

    def share_masks(self):
        if self.masks is None:
            self.masks = []
        self.uses = 0

    def forget_masks(self):
        self.uses = 0
        self.masks = None

    def next_p(self):
        if self.masks is not None:
            self.uses += 1
            return self.p / self.uses
        return self.p

    def forward(self, x):
        return nn.functional.dropout(x, self.next_p(), self.training)
