"""TCF108 positive: `sdp_kernel` imported by name, flash only (the other three flags off), and the
file already imports `SDPBackend` and `sdpa_kernel`: the fix uses those names."""
import torch.nn.functional as F
from torch import nn
from torch.backends.cuda import sdp_kernel
from torch.nn.attention import SDPBackend, sdpa_kernel


class FlashAttention(nn.Module):
    def forward(self, q, k, v):
        with sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False, enable_cudnn=False):
            return F.scaled_dot_product_attention(q, k, v)


class MathAttention(nn.Module):
    def forward(self, q, k, v):
        with sdpa_kernel(SDPBackend.MATH):
            return F.scaled_dot_product_attention(q, k, v)
