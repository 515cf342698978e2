# In image / audio generation a "tokenizer" is often a neural network: here a VQ image tokenizer,
# an nn.Module built in __init__. Calling it in forward is ordinary traced module code.
# tcfix: no TCF102 finding (the rule is about non-module helper objects).
import torch
import torch.nn.functional as F
from torch import nn


class VQTokenizer(nn.Module):
    def __init__(self, codebook_size: int = 1024, dim: int = 64):
        super().__init__()
        self.encoder = nn.Conv2d(3, dim, kernel_size=8, stride=8)
        self.codebook = nn.Embedding(codebook_size, dim)
        self.codebook_size = codebook_size

    def encode(self, images):
        z = self.encoder(images).flatten(2).transpose(1, 2)
        distances = torch.cdist(z, self.codebook.weight.unsqueeze(0))
        return distances.argmin(-1)

    def forward(self, images):
        return self.encode(images)


class MaskedImageTransformer(nn.Module):
    def __init__(self, dim: int = 64, codebook_size: int = 1024):
        super().__init__()
        self.tokenizer = VQTokenizer(codebook_size, dim)
        self.embed = nn.Embedding(codebook_size + 1, dim)
        self.encoder = nn.TransformerEncoderLayer(dim, 4, batch_first=True)
        self.head = nn.Linear(dim, codebook_size)

    def forward(self, images, mask):
        with torch.no_grad():
            codes = self.tokenizer.encode(images)
        tokens = codes.masked_fill(mask, self.tokenizer.codebook_size)
        logits = self.head(self.encoder(self.embed(tokens)))
        return F.cross_entropy(logits[mask], codes[mask])
