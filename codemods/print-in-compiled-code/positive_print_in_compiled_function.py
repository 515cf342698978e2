# A print in a function decorated with `@torch.compile(...)`: graph break GB0059.
# tcfix: TCF101 (high) in the torch.compile'd function, fix guards it.
import torch
import torch.nn.functional as F


@torch.compile(fullgraph=False)
def fused_gelu_bias(x, bias):
    print("fused_gelu_bias", x.shape)
    return F.gelu(x + bias, approximate="tanh")
