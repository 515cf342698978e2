# The module imports torch only inside the function that uses the old context manager (importing
# the module must not load torch). The fix writes `torch.nn.attention.sdpa_kernel`, which that
# local import already provides: no import is added, the fix stays Safe.
# tcfix: TCF108 (low: not compiled here), fix rewrites the call, no new import.


def math_attention(q, k, v):
    import torch
    import torch.nn.functional as F

    with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
        return F.scaled_dot_product_attention(q, k, v)
