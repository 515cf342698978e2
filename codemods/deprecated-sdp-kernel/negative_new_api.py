"""TCF108 negative: the new API, and an unrelated `sdp_kernel` attribute of a config object."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.kernel_name = config.sdp_kernel

    def forward(self, q, k, v):
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
            return F.scaled_dot_product_attention(q, k, v)
