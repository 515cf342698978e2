# A library spells `torch._dynamo.assume_constant_result` without importing torch: its own
# decorator sets the attribute Dynamo reads. A capability probe so marked is called once at trace
# time and its result inlined: the warning inside it (and in what it calls) is never traced.
# tcfix: no TCF101 finding.
import logging
from functools import lru_cache

import torch
from torch import nn

logger = logging.getLogger(__name__)


def _trace_time_constant(fn):
    setattr(fn, "_dynamo_marked_constant", True)
    return fn


def _probe_package(name: str) -> bool:
    logger.debug("probing %s", name)
    return name == "fused_kernels"


@lru_cache
@_trace_time_constant
def fused_kernels_available() -> bool:
    if not _probe_package("fused_kernels"):
        logger.warning("fused kernels not found, using the slow path")
        return False
    return True


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if fused_kernels_available():
            return self.proj(x).relu_()
        return self.proj(x).relu()
