"""TCF108 edge: CRLF line endings, tab indentation, a multi-line call, `as` target, and no
`import torch` (only `from torch.backends import cuda`): tcfix adds `import torch`."""
import torch.nn.functional as F
from torch import nn
from torch.backends import cuda


class Attention(nn.Module):
	def forward(self, q, k, v):
		with cuda.sdp_kernel(
			enable_flash=False,
			enable_mem_efficient=True,
		) as ctx:  # no flash on this GPU
			return F.scaled_dot_product_attention(q, k, v)
