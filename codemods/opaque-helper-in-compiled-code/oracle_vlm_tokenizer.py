"""Oracle fixture for opaque-helper-in-compiled-code (TCF102).

A small nanoVLM-style vision-language model: a ViT encoder, a pixel-shuffle modality projector and a
decoder-only language model. `forward` splices the projected image patches into the token embeddings
at the `<image>` placeholders, and the helper that does it looks the placeholder id up on the tokenizer
every call: `self.tokenizer.image_token_id`. The tokenizer is a real Rust-backed
`tokenizers.Tokenizer` (a tiny WordLevel vocabulary built here, nothing downloaded); its
`token_to_id` is opaque to Dynamo, so the lookup is a graph break. tcfix caches the id in `__init__`
after the last line there that uses the tokenizer and reads the cached attribute in the helper.
"""
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import WhitespaceSplit
from torch import nn

SPECIAL_TOKENS = ["<pad>", "<unk>", "<bos>", "<eos>", "<image>"]
WORDS = "a an the photo picture image of with cat dog sitting on mat sofa what is in this describe".split()


class VLMTokenizer:
    """What HF fast tokenizers look like from the model's side: a Python wrapper around the Rust
    tokenizer, with the special-token ids exposed as properties."""

    def __init__(self):
        vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS + WORDS)}
        self._tok = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
        self._tok.pre_tokenizer = WhitespaceSplit()

    @property
    def image_token_id(self) -> int:
        return self._tok.token_to_id("<image>")

    @property
    def vocab_size(self) -> int:
        return self._tok.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text).ids


@dataclass
class VLMConfig:
    image_size: int = 32
    patch_size: int = 8
    vit_dim: int = 32
    vit_heads: int = 2
    vit_layers: int = 2
    pixel_shuffle_factor: int = 2
    lm_dim: int = 48
    lm_heads: int = 4
    lm_layers: int = 2
    lm_max_len: int = 64

    @property
    def image_token_count(self) -> int:
        patches = (self.image_size // self.patch_size) ** 2
        return patches // self.pixel_shuffle_factor**2


class Block(nn.Module):
    """Pre-norm transformer block; causal for the language model, bidirectional for the ViT."""

    def __init__(self, dim: int, heads: int, causal: bool):
        super().__init__()
        self.heads = heads
        self.causal = causal
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        attn = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=self.causal
        )
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


class VisionEncoder(nn.Module):
    def __init__(self, cfg: VLMConfig):
        super().__init__()
        patches = (cfg.image_size // cfg.patch_size) ** 2
        self.patch_embed = nn.Conv2d(3, cfg.vit_dim, kernel_size=cfg.patch_size, stride=cfg.patch_size)
        self.pos_embed = nn.Parameter(torch.randn(1, patches, cfg.vit_dim) * 0.02)
        self.blocks = nn.ModuleList([Block(cfg.vit_dim, cfg.vit_heads, causal=False) for _ in range(cfg.vit_layers)])
        self.norm = nn.LayerNorm(cfg.vit_dim)

    def forward(self, images):
        x = self.patch_embed(images).flatten(2).transpose(1, 2) + self.pos_embed
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


class ModalityProjector(nn.Module):
    """Pixel shuffle (fewer, wider image tokens) then a linear map into the language model's width."""

    def __init__(self, cfg: VLMConfig):
        super().__init__()
        self.factor = cfg.pixel_shuffle_factor
        self.proj = nn.Linear(cfg.vit_dim * self.factor**2, cfg.lm_dim, bias=False)

    def pixel_shuffle(self, x):
        b, n, d = x.shape
        side = int(n**0.5)
        f = self.factor
        x = x.reshape(b, side // f, f, side // f, f, d).permute(0, 1, 3, 2, 4, 5)
        return x.reshape(b, (side // f) ** 2, f * f * d)

    def forward(self, x):
        return self.proj(self.pixel_shuffle(x))


class LanguageModel(nn.Module):
    def __init__(self, cfg: VLMConfig, vocab_size: int):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, cfg.lm_dim)
        self.pos_embedding = nn.Parameter(torch.randn(1, cfg.lm_max_len, cfg.lm_dim) * 0.02)
        self.blocks = nn.ModuleList([Block(cfg.lm_dim, cfg.lm_heads, causal=True) for _ in range(cfg.lm_layers)])
        self.norm = nn.LayerNorm(cfg.lm_dim)
        self.head = nn.Linear(cfg.lm_dim, vocab_size, bias=False)

    def forward(self, embeddings):
        x = embeddings + self.pos_embedding[:, : embeddings.size(1)]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class VisionLanguageModel(nn.Module):
    def __init__(self, cfg: VLMConfig, tokenizer: VLMTokenizer):
        super().__init__()
        self.cfg = cfg
        self.vision_encoder = VisionEncoder(cfg)
        self.projector = ModalityProjector(cfg)
        self.tokenizer = tokenizer
        self.decoder = LanguageModel(cfg, tokenizer.vocab_size)

    def _replace_img_tokens_with_embd(self, input_ids, token_embd, image_embd):
        # Every <image> placeholder takes the next projected image patch, in order.
        mask = input_ids == self.tokenizer.image_token_id
        return token_embd.masked_scatter(mask.unsqueeze(-1), image_embd.to(token_embd.dtype))

    def forward(self, input_ids, images):
        image_embd = self.projector(self.vision_encoder(images))
        token_embd = self.decoder.token_embedding(input_ids)
        combined = self._replace_img_tokens_with_embd(input_ids, token_embd, image_embd)
        return self.decoder(combined)


def _build_model():
    return VisionLanguageModel(VLMConfig(), VLMTokenizer())


def _prompt_batch(tokenizer: VLMTokenizer, cfg: VLMConfig, prompts: list[str]):
    image_tokens = " ".join(["<image>"] * cfg.image_token_count)
    ids = [tokenizer.encode(f"<bos> {image_tokens} {p}") for p in prompts]
    assert len({len(i) for i in ids}) == 1, "prompts of one batch must tokenize to the same length"
    images = torch.randn(len(prompts), 3, cfg.image_size, cfg.image_size)
    return torch.tensor(ids), images


def oracle_cases():
    tokenizer, cfg = VLMTokenizer(), VLMConfig()
    batches = [
        _prompt_batch(tokenizer, cfg, ["describe this image", "what is this"]),
        _prompt_batch(tokenizer, cfg, ["a cat on the sofa", "a dog on the mat"]),
    ]
    return [
        {
            "name": "inference",
            "factory": lambda: _build_model().eval(),
            "inputs": batches,
            # Before, the helper itself also falls back to eager ("Failed to handle graph break
            # gracefully"): that is the eager frame.
            "expect": {"graph_breaks": (">=1", 0), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": _build_model,
            "inputs": batches,
            "train": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (">=1", 0), "eager_frames": (None, 0)},
        },
    ]
