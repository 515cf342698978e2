"""Whole-model oracle: a small vision-language model, every hazard left where such models put it.

A ViT encodes the image, a pixel-shuffle projector maps its patches to the language model's width,
and a decoder with rotary attention reads the text with the image patches spliced in. Three hazards
sit in it, each where the model that motivated tcfix had it:

- the merge looks the `<image>` placeholder id up on the tokenizer on every call
  (`self.tokenizer.image_token_id`, a Rust-backed `tokenizers.Tokenizer` behind a Python property:
  a graph break, TCF102);
- the merge writes the image patches through a boolean mask, `out[mask] = image_embd.view(-1, d)`,
  in a helper that forward calls with the modules' outputs as arguments: in training its backward
  needs `nonzero`, and AOTAutograd gives the frame up to eager (TCF105's hazard);
- the rotary embedding stretches its frequencies once the positions pass the length it was trained
  for: `max_seq = position_ids.max() + 1; if max_seq > self.original_max_seq_len:` is a branch on a
  0-d tensor, a graph break (TCF104).

Its cases run the whole model with `tcfix --apply` and with `--apply --unsafe-fixes`, in inference and
in training, through an AOTAutograd backend (backend "aot_eager": without it the training fallback
above cannot be seen), and check the issue #13 targets for a whole model (`whole_model`).
"""
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import WhitespaceSplit
from torch import nn

SPECIALS = ["<pad>", "<unk>", "<s>", "</s>", "<image>"]
VOCAB_WORDS = "describe the picture what is on table a red cup small bird near window".split()


class PromptTokenizer:
    """The model-side view of a fast tokenizer: a Python object around the Rust one, its special ids
    read through properties."""

    def __init__(self):
        vocab = {word: i for i, word in enumerate(SPECIALS + VOCAB_WORDS)}
        self._rust = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
        self._rust.pre_tokenizer = WhitespaceSplit()

    @property
    def image_token_id(self) -> int:
        return self._rust.token_to_id("<image>")

    def __len__(self) -> int:
        return self._rust.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        return self._rust.encode(text).ids


class Config:
    image_size = 16
    patch = 4
    vision_dim = 16
    shuffle = 2
    text_dim = 32
    heads = 2
    layers = 2
    original_max_seq_len = 16

    @property
    def image_tokens(self) -> int:
        return (self.image_size // self.patch) ** 2 // self.shuffle**2


class VisionEncoder(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        patches = (cfg.image_size // cfg.patch) ** 2
        self.to_patches = nn.Conv2d(3, cfg.vision_dim, cfg.patch, stride=cfg.patch)
        self.positions = nn.Parameter(torch.randn(1, patches, cfg.vision_dim) * 0.02)
        self.layer = nn.TransformerEncoderLayer(cfg.vision_dim, 2, 2 * cfg.vision_dim, dropout=0.0, batch_first=True)

    def forward(self, images):
        x = self.to_patches(images).flatten(2).transpose(1, 2) + self.positions
        return self.layer(x)


class PixelShuffleProjector(nn.Module):
    """Folds each shuffle x shuffle square of patches into one wider token, then maps it to text width."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.shuffle = cfg.shuffle
        self.linear = nn.Linear(cfg.vision_dim * cfg.shuffle**2, cfg.text_dim, bias=False)

    def forward(self, patches):
        b, n, d = patches.shape
        side, s = int(n**0.5), self.shuffle
        x = patches.reshape(b, side // s, s, side // s, s, d).permute(0, 1, 3, 2, 4, 5)
        return self.linear(x.reshape(b, (side // s) ** 2, s * s * d))


class ScaledRotaryEmbedding(nn.Module):
    """Rotary angles for the decoder; past the trained length the frequencies are divided down so the
    longest position maps back inside it."""

    def __init__(self, head_dim: int, original_max_seq_len: int, base: float = 10000.0):
        super().__init__()
        self.original_max_seq_len = original_max_seq_len
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, position_ids):
        max_seq = position_ids.max() + 1
        if max_seq > self.original_max_seq_len:
            inv_freq = self.inv_freq / (max_seq / self.original_max_seq_len)
        else:
            inv_freq = self.inv_freq
        angles = position_ids.float().unsqueeze(-1) * inv_freq
        angles = torch.cat([angles, angles], dim=-1)
        return angles.cos(), angles.sin()


def rotate(x, cos, sin):
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-second, first], dim=-1) * sin


class DecoderBlock(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.RMSNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.norm2 = nn.RMSNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).transpose(1, 3).unbind(2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        attn = F.scaled_dot_product_attention(rotate(q, cos, sin), rotate(k, cos, sin), v, is_causal=True)
        x = x + self.out(attn.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


class TextDecoder(nn.Module):
    def __init__(self, cfg: Config, vocab_size: int):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, cfg.text_dim)
        self.rotary = ScaledRotaryEmbedding(cfg.text_dim // cfg.heads, cfg.original_max_seq_len)
        self.blocks = nn.ModuleList([DecoderBlock(cfg.text_dim, cfg.heads) for _ in range(cfg.layers)])
        self.norm = nn.RMSNorm(cfg.text_dim)
        self.lm_head = nn.Linear(cfg.text_dim, vocab_size, bias=False)

    def forward(self, embeddings, position_ids):
        cos, sin = self.rotary(position_ids)
        x = embeddings
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.lm_head(self.norm(x))


class VisionLanguageModel(nn.Module):
    def __init__(self, cfg: Config, tokenizer: PromptTokenizer):
        super().__init__()
        self.vision = VisionEncoder(cfg)
        self.projector = PixelShuffleProjector(cfg)
        self.tokenizer = tokenizer
        self.decoder = TextDecoder(cfg, len(tokenizer))

    def _merge_image_features(self, input_ids, token_embd, image_embd):
        # The placeholders take the projected patches in order, image after image.
        out = token_embd.clone()
        mask = input_ids == self.tokenizer.image_token_id
        d = image_embd.size(-1)
        out[mask] = image_embd.view(-1, d).to(out.dtype)
        return out

    def forward(self, input_ids, images, position_ids):
        image_embd = self.projector(self.vision(images))
        token_embd = self.decoder.embed(input_ids)
        merged = self._merge_image_features(input_ids, token_embd, image_embd)
        return self.decoder(merged, position_ids)


def _model():
    return VisionLanguageModel(Config(), PromptTokenizer())


def _batches():
    """Two batches of one shape; the positions of the second pass the trained length (16), so
    both sides of the rotary test run."""
    tokenizer, cfg = PromptTokenizer(), Config()
    placeholders = " ".join(["<image>"] * cfg.image_tokens)
    prompts = ["describe the picture", "what is on the table"]
    ids = [tokenizer.encode(f"<s> {placeholders} {p}")[:10] for p in prompts]
    ids = [row + [0] * (10 - len(row)) for row in ids]
    input_ids = torch.tensor(ids)
    batches = []
    for offset in (0, 12):
        images = torch.randn(2, 3, cfg.image_size, cfg.image_size)
        position_ids = (torch.arange(10) + offset).expand(2, 10)
        batches.append((input_ids, images, position_ids))
    return batches


def oracle_cases():
    batches = _batches()
    # (mode, fix level) -> today's counts (before, after) and the targets they miss (none now).
    # The safe pass leaves the file as it is: TCF102's hoist is Unsafe here, since without the
    # tokenizer break `_merge_image_features` is traced into forward's graph with its masked write,
    # and in training the whole frame would fall back to eager (aten.nonzero; measured: graphs 5 -> 6,
    # eager frames 1 -> 2). --unsafe-fixes applies it with TCF105's masked_scatter.
    measured = {
        ("inference", "safe"): (
            {"graph_breaks": (3, 3), "recompiles": (0, 0), "graphs": (5, 5), "eager_frames": (1, 1)},
            {},
        ),
        ("training", "safe"): (
            {"graph_breaks": (3, 3), "recompiles": (0, 0), "graphs": (5, 5), "eager_frames": (1, 1)},
            {},
        ),
        # With the hoist, TCF105's masked_scatter and TCF104's torch.where over the rotary scaling
        # (`self.inv_freq` is a buffer, `max_seq / N` a 0-d tensor): one graph, measured with torch 2.15.
        ("inference", "unsafe"): (
            {"graph_breaks": (3, 0), "recompiles": (0, 0), "graphs": (5, 1), "eager_frames": (1, 0)},
            {},
        ),
        ("training", "unsafe"): (
            {"graph_breaks": (3, 0), "recompiles": (0, 0), "graphs": (5, 1), "eager_frames": (1, 0)},
            {},
        ),
    }
    cases = []
    for (mode, level), (expect, gaps) in measured.items():
        train = mode == "training"
        cases.append({
            "name": f"{mode}-{level}",
            "factory": _model if train else (lambda: _model().eval()),
            "inputs": batches,
            "train": train,
            "no_grad": not train,
            "unsafe_fixes": level == "unsafe",
            "backend": "aot_eager",
            "atol": 1e-5,
            "whole_model": True,
            "baseline": mode,
            "expect": expect,
            "gaps": gaps,
        })
    return cases
