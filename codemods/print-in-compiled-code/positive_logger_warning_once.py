# transformers patches `logging.Logger.warning_once`; HF modeling code calls it in forward.
# It is a logger method like any other: Dynamo breaks the graph on it (GB0291) when the branch runs.
# tcfix: TCF101 on `logger.warning_once()`, fix guards it; low, as the branch needs a caller that
# passes `use_cache=True` (`unset_flags`).
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class DecoderLayer(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.gradient_checkpointing = False
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, dim))

    def forward(self, hidden_states, use_cache: bool = False):
        if use_cache and self.gradient_checkpointing and self.training:
            logger.warning_once("`use_cache=True` is incompatible with gradient checkpointing.")
            use_cache = False
        return hidden_states + self.mlp(hidden_states)
