# A `generate` loop that prints each token. It calls the model (whose forward is compiled) but is
# not compiled itself, and forward does not call it.
# tcfix: no TCF101 finding.
import torch
from torch import nn


class CharLM(nn.Module):
    def __init__(self, vocab: int = 128, dim: int = 64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        out, _ = self.rnn(self.embed(ids))
        return self.head(out)

    @torch.no_grad()
    def generate(self, ids, max_new_tokens: int = 20):
        for _ in range(max_new_tokens):
            logits = self(ids)[:, -1]
            next_id = logits.argmax(-1, keepdim=True)
            print(chr(next_id.item()), end="", flush=True)
            ids = torch.cat([ids, next_id], dim=1)
        return ids
