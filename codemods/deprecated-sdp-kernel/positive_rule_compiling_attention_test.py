"""A test file that does compile the module it defines (`torch.compile(...)` in the test): there
the old context manager in `forward` is traced and breaks the graph, so it stays a graph-break
finding (high), as in any other file."""
import torch
import torch.nn.functional as F
from torch import nn


class PinnedAttention(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        with torch.backends.cuda.sdp_kernel(enable_flash=False):
            return F.scaled_dot_product_attention(q, k, v)


def test_compiled_attention_runs():
    q = torch.randn(1, 2, 4, 8)
    out = torch.compile(PinnedAttention())(q, q, q)
    assert out.shape == q.shape
