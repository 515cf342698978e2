"""Oracle fixture for bool-mask-index-put (TCF105).

A small vision-language model that writes its projected image features into the text embeddings at
the image-token positions with `inputs_embeds[image_mask] = image_features` (the kosmos-2.5 pattern).
In training the image features require grad; the backward of that assignment needs `nonzero`, and
with an AOTAutograd backend (`aot_eager`, inductor) the compiled frame fails and falls back to eager
(pytorch#114686): measured with torch 2.15.0, `frames ok` 0 -> 1 and graphs 0 -> 1 after the fix
(tests/oracle's counting backend does not run AOTAutograd, so it sees one graph on both sides: this
case checks that outputs and gradients stay equal). With --unsafe-fixes tcfix rebinds
`inputs_embeds = inputs_embeds.masked_scatter(image_mask.unsqueeze(-1), image_features)`.
"""
import torch
from torch import nn

IMAGE_TOKEN_ID = 7


class TinyVLM(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 16, patch_dim: int = 12):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.vision_proj = nn.Sequential(nn.Linear(patch_dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.decoder = nn.TransformerEncoderLayer(dim, 2, dim * 2, dropout=0.0, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor, patches: torch.Tensor) -> torch.Tensor:
        image_features = self.vision_proj(patches)
        inputs_embeds = self.embed_tokens(input_ids).clone()
        image_mask = input_ids == IMAGE_TOKEN_ID
        inputs_embeds[image_mask] = image_features
        return self.lm_head(self.decoder(inputs_embeds))


def _batch():
    input_ids = torch.randint(8, 32, (2, 10))
    input_ids[:, 1:4] = IMAGE_TOKEN_ID
    return input_ids, torch.randn(6, 12)


def oracle_cases():
    batches = [_batch() for _ in range(3)]
    return [
        {
            "name": "training",
            "factory": TinyVLM,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (0, 0), "graphs": (1, 1), "eager_frames": (0, 0)},
        },
    ]
