"""TCF108 positive without a fix: the flags come from configuration, known only at run time."""
import torch
import torch.nn.functional as F
from torch import nn


class ConfigurableAttention(nn.Module):
    def __init__(self, use_flash: bool):
        super().__init__()
        self.use_flash = use_flash

    def forward(self, q, k, v):
        with torch.backends.cuda.sdp_kernel(enable_flash=self.use_flash, enable_math=True):
            return F.scaled_dot_product_attention(q, k, v)
