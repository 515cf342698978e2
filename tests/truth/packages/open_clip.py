"""open_clip_torch 3.3.0: `open_clip.create_model(name, pretrained=None)` for a handful of architectures
(plain ViT, ResNet, timm towers, CoCa, SigLIP, MobileCLIP), image and text forward together.

Generic rule: the architecture's own config, with its towers shortened (2 blocks, or one block per
ResNet stage), a 64-pixel image and a 16-token context, passed back as `vision_cfg`/`text_cfg` (the
constructor's highest-priority override). Inputs: batch 2 then 3.
"""
from __future__ import annotations

import torch

from . import Case

ARCHITECTURES = (
    "ViT-S-32",  # the plain CLIP vision transformer and text transformer
    "RN50",  # ModifiedResNet with its attention pool
    "convnext_tiny",  # a timm tower behind a projection
    "MobileCLIP-S1",  # fastvit tower and the custom text encoder without causal mask
    "coca_ViT-B-32",  # CoCa: attentional pooler and a multimodal text decoder
    "ViT-M-16-alt",  # the ViT tower at patch 16 with a narrower text tower
)
# Left out: timm ViT towers (ViT-B-16-SigLIP, EVA02-B-16, ViTamin-S, PE-Core-T-16-384) keep a fixed 224 image whatever
# vision_cfg's image_size says, which costs more than the case is worth on CPU.

IMAGE = 64
CONTEXT = 16
BLOCKS = 2

LEFT_OUT = {}


def names() -> list[str]:
    return [n for n in ARCHITECTURES if n not in LEFT_OUT]


def _short(cfg: dict, image: bool) -> dict:
    """A tower config with fewer blocks and a smaller image or context."""
    cfg = dict(cfg)
    layers = cfg.get("layers")
    if isinstance(layers, int):
        cfg["layers"] = min(layers, BLOCKS)
    elif isinstance(layers, (list, tuple)):
        cfg["layers"] = [1] * len(layers)
    if image:
        cfg["image_size"] = IMAGE
    elif "context_length" in cfg:
        cfg["context_length"] = CONTEXT
    return cfg


def _loss(output):
    values = list(output.values()) if isinstance(output, dict) else list(output)
    tensors = [v for v in values if isinstance(v, torch.Tensor) and v.dim() > 0 and v.is_floating_point()]
    return sum(t.float().mean() for t in tensors[:2])


def build(name: str) -> Case:
    import open_clip
    from open_clip.factory import get_model_config

    base = get_model_config(name)
    overrides = {"vision_cfg": _short(base["vision_cfg"], True), "text_cfg": _short(base["text_cfg"], False)}
    if "multimodal_cfg" in base:
        overrides["multimodal_cfg"] = _short(base["multimodal_cfg"], False)
    torch.manual_seed(0)
    model = open_clip.create_model(name, pretrained=None, **overrides).eval()
    vocab = base["text_cfg"].get("vocab_size", 49408)
    context = overrides["text_cfg"].get("context_length", CONTEXT)

    def make(batch):
        return lambda: ((torch.randn(batch, 3, IMAGE, IMAGE), torch.randint(1, vocab, (batch, context))), {})

    return Case(model=model, inputs=[make(2), make(3)], loss=_loss, options={"pretrained": None, **overrides})
