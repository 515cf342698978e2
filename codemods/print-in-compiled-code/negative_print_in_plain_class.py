# A print in a class that is not an nn.Module (a data collator): nothing compiles it.
# tcfix: no TCF101 finding.
import torch
from torch import nn


class PadCollator:
    def __init__(self, pad_id: int):
        self.pad_id = pad_id

    def __call__(self, batch):
        longest = max(len(seq) for seq in batch)
        print(f"collating {len(batch)} sequences, longest {longest}")
        out = torch.full((len(batch), longest), self.pad_id, dtype=torch.long)
        for i, seq in enumerate(batch):
            out[i, : len(seq)] = torch.as_tensor(seq)
        return out


class Embedder(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)

    def forward(self, ids):
        return self.embed(ids).mean(dim=1)
