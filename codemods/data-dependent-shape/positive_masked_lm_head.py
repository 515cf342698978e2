"""A masked-LM head that runs the decoder only on the masked tokens (ModernBERT-style)."""
import torch
import torch.nn.functional as F
from torch import nn


class MaskedLMHead(nn.Module):
    def __init__(self, dim: int = 16, vocab: int = 50):
        super().__init__()
        self.decoder = nn.Linear(dim, vocab)

    def forward(self, last_hidden_state: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        mask_tokens = labels != -100
        hidden = last_hidden_state[mask_tokens]
        logits = self.decoder(hidden)
        return F.cross_entropy(logits, labels[mask_tokens])
