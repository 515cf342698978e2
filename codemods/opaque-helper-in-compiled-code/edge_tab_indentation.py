# Tab indentation: the cache line in __init__ is indented with tabs like its neighbours.
# tcfix: TCF102 (high); fix inserts `\t\tself.pad_token_id_ = self.tokenizer.pad_token_id`.
import torch
from torch import nn


class Pooler(nn.Module):
	def __init__(self, tokenizer, dim: int):
		super().__init__()
		self.tokenizer = tokenizer
		self.dense = nn.Linear(dim, dim)

	def forward(self, input_ids, hidden):
		mask = (input_ids != self.tokenizer.pad_token_id).unsqueeze(-1).to(hidden.dtype)
		pooled = (hidden * mask).sum(1) / mask.sum(1).clamp_min(1.0)
		return torch.tanh(self.dense(pooled))
