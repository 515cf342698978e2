"""Tab indentation: the `if` goes, the raise (its message over several lines, one of them inside a
triple-quoted string that must not change) moves up one level, and the clamp temporary moves
before the selection; a comment in the header stays, one inside the body refuses the fix."""
import torch
from torch import nn


class Block(nn.Module):
	def forward(self, x: torch.Tensor) -> torch.Tensor:
		if x.abs().max() > 1e4:
			raise ValueError(
				"""overflow:
				lower the learning rate"""
				f" (dtype {x.dtype})"
			)
		if not torch.isfinite(x).all():
			clamp_value = torch.finfo(x.dtype).max - 1000
			x = torch.clamp(x, min=-clamp_value, max=clamp_value)
		if x.dtype == torch.float16 and (x < -100).any():  # fp16 only
			raise ValueError("underflow")
		if (x == 0).all():
			# nothing left
			raise ValueError("all zeros")
		return x
