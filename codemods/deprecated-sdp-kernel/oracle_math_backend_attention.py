"""Oracle fixture for deprecated-sdp-kernel (TCF108).

A causal self-attention block that pins scaled_dot_product_attention to the math backend with the
deprecated `torch.backends.cuda.sdp_kernel`. Compiled, the context manager is a graph break
(GB0208). tcfix rewrites it to `torch.nn.attention.sdpa_kernel([...MATH])`: one graph, and the
same outputs (the math backend is the only one on CPU).
"""
import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False, enable_math=True):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, n, d))


def oracle_cases():
    batches = [(torch.randn(2, 8, 32),) for _ in range(3)]
    return [
        {
            "name": "inference",
            "factory": lambda: CausalSelfAttention().eval(),
            "inputs": batches,
            "expect": {"graph_breaks matching GB0208|non-Tensor": (">=1", 0), "graphs": (">1", 1), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": CausalSelfAttention,
            "inputs": batches,
            "train": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (">=1", 0), "eager_frames": (None, 0)},
        },
    ]
