"""TCF101 positive, Unsafe: a log-the-first-n-times helper, called from `forward`, bumps a
module-level counter and logs while the count is at most n. The guard can only go around the log
call; the counter is still bumped under compile, so the message is never written.

Measured under torch 2.15 on this file (three calls, inference and a training step): before 1 graph,
1 break, the message shown once; with the guard on the call 3 graphs (the counter's value is guarded,
so each call recompiles), 0 breaks, the message never shown. With a caller lookup before the counter
(`sys._getframe`, as detectron2's helper has): 2 graphs and 1 break before, 2 graphs and 2 breaks
after, the message never shown.

tcfix should report `logger.info()` in `log_first_n` with the guard as an Unsafe fix naming `_SEEN`.
"""
import logging
from collections import Counter

import torch
from torch import nn

logger = logging.getLogger(__name__)
_SEEN = Counter()


def log_first_n(message: str, n: int = 1):
    _SEEN[message] += 1
    if _SEEN[message] <= n:
        logger.info(message)


class Detector(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        log_first_n("Detector called without proposals")
        return self.head(x)
