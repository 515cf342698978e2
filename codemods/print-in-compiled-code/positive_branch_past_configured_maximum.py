"""A branch taken when a value goes past a maximum the config sets (`self.max_tracked =
config.max_tracked`, 64 by default): a normal call stays within it, so the warning there is real
only past the limit. It stays, low, with the limit's default in the message. A threshold that
ordinary input crosses (`window`, not named a maximum) keeps its severity, and so does the test
the other way round only in its `else`."""
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class TrackerConfig:
    max_tracked: int = 64
    window: int = 8


class Tracker(nn.Module):
    def __init__(self, config: TrackerConfig):
        super().__init__()
        self.max_tracked = config.max_tracked
        self.window = config.window
        self.proj = nn.Linear(4, 4)

    def forward(self, boxes: torch.Tensor, known: list, new: list) -> torch.Tensor:
        if len(known) + len(new) > self.max_tracked:
            logger.warning("dropping detections past the maximum")
        if len(new) <= self.max_tracked:
            boxes = self.proj(boxes)
        else:
            print("too many new detections")
        if len(known) > self.window:
            print("older than the window")
        return boxes
