"""Oracle fixture for bool-mask-index-put (TCF105): the embeddings a merge helper writes into are a
tensor only by what the helper does with them.

The model's text embedding comes from a factory (`build_text_embedding`), so tcfix cannot tell
from `self.text.embed(input_ids)` that the helper's `token_embeds` is a tensor; the helper itself
says so: `token_embeds.clone()` (numpy arrays `copy()`, tensors `clone()`). The boolean-mask write
`merged[mask] = image_embeds...` is then reported, and with --unsafe-fixes rebinds `merged` with
`masked_scatter`.

The helper also asks a Python tokenizer wrapper for the placeholder id (TCF102, a graph break).
Caching that id in `__init__` would join both halves into one graph that holds the masked write,
and in training AOTAutograd would give that whole frame up to eager (measured on nanoVLM: 3 of 4
frames compiled -> 0 of 2): so the cache is Unsafe here, and `--apply` alone leaves the frame as
it was. With both fixes (aot_eager, training): no graph break, no eager frame, outputs and
gradients equal.
"""
import torch
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from torch import nn


class PlaceholderTokenizer:
    """A Python wrapper around a Rust tokenizer, the placeholder id behind a property."""

    def __init__(self):
        self._tok = Tokenizer(WordLevel({"<unk>": 0, "<image>": 7}, unk_token="<unk>"))

    @property
    def image_token_id(self) -> int:
        return self._tok.token_to_id("<image>")


class TextModel(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)

    def forward(self, embeds):
        return self.mix(embeds)


def build_text_embedding(vocab: int, dim: int):
    return TextModel(vocab, dim)


class FactoryBuiltVLM(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8, patch_dim: int = 6):
        super().__init__()
        self.text = build_text_embedding(vocab, dim)
        self.vision = nn.Linear(patch_dim, dim)
        self.tokenizer = PlaceholderTokenizer()

    def _merge(self, input_ids, token_embeds, image_embeds):
        merged = token_embeds.clone()
        mask = input_ids == self.tokenizer.image_token_id
        merged[mask] = image_embeds.view(-1, image_embeds.size(-1))
        return merged

    def forward(self, input_ids, patches):
        token_embeds = self.text.embed(input_ids)
        image_embeds = self.vision(patches)
        return self.text(self._merge(input_ids, token_embeds, image_embeds))


def _batch():
    input_ids = torch.randint(8, 16, (2, 6))
    input_ids[:, 1:3] = 7
    return input_ids, torch.randn(2, 2, 6)


def oracle_cases():
    batches = [_batch() for _ in range(2)]
    return [
        {
            "name": "training",
            "factory": FactoryBuiltVLM,
            "inputs": batches,
            "train": True,
            "backend": "aot_eager",
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (">=1", 0), "eager_frames": (">=1", 0)},
        },
    ]
