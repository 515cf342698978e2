# A print in a plain function that is later passed to `torch.compile(fn)`.
# tcfix: TCF101 (high) in `rms_norm`, fix guards it.
import torch


def rms_norm(x, weight, eps: float = 1e-6):
    print("rms_norm", x.dtype, x.shape)
    variance = x.pow(2).mean(-1, keepdim=True)
    return x * torch.rsqrt(variance + eps) * weight


compiled_rms_norm = torch.compile(rms_norm, dynamic=True)
