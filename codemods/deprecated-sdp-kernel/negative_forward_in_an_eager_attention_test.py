"""A test file (pytest collects `*_test.py`) that builds a small attention module and pins the
math backend with the old context manager, but never calls `torch.compile`: the module runs
eagerly, so the call only warns and breaks no graph: tcfix says nothing."""
import torch
import torch.nn.functional as F
from torch import nn


class PinnedAttention(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
            return F.scaled_dot_product_attention(q, k, v)


def test_math_backend_matches_reference():
    q = torch.randn(1, 2, 4, 8)
    out = PinnedAttention()(q, q, q)
    assert out.shape == q.shape
