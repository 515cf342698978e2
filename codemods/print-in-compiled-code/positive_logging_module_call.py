# `logging.info(...)` (the root logger, called through the module) in forward: graph break GB0291.
# tcfix: TCF101 (high), fix guards the statement.
import logging

import torch
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self, dim: int, num_classes: int):
        super().__init__()
        self.proj = nn.Linear(dim, num_classes)

    def forward(self, features):
        logging.info("classifier features %s", tuple(features.shape))
        return F.log_softmax(self.proj(features), dim=-1)
