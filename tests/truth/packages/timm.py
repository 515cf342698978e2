"""timm 1.0.31: the smallest variant of each model file (module), `create_model(name, pretrained=False)`.

Generic rule: per module, models are ranked by size words in the name (test_ first, then atto,
femto, pico, nano, tiny, small, ...; else the smallest number in the name); the first is taken,
and for modules that ship a `test_` model also the first real one. Inputs: a small image (see
_input_size), batch 2 then 3. A few cases turn on options users set for compile (OPTION_CASES).
"""
from __future__ import annotations

import re

import torch

from . import Case

SIZE_WORDS = ("atto", "femto", "pico", "nano", "xxs", "xs", "tiny", "mini", "micro", "lite", "small",
              "s0", "b0", "m0", "t0", "s1", "s", "light", "mobile")

# Modules whose ranked pick is wrong or too large to compile in seconds: the model to take instead.
PICKS = {
    # the number ranking reads "v2" in poolformerv2_m36; the s12/s18 variants are the small ones.
    "metaformer": ["poolformerv2_s12", "caformer_s18"],
}

# Image sizes: models that take any size get SMALL_IMAGE; fixed-size ones are built for FIXED_IMAGE
# (a multiple of patch sizes 8, 14 and 16) so that each case compiles and runs in seconds on CPU.
SMALL_IMAGE = 96
FIXED_IMAGE = 112

# Image size where the generic one does not fit the model; why in each.
SIZES = {
    # position tables, windows or pooling kernels are sized for the default image beyond what
    # img_size reaches: these keep their default size
    "coat_tiny": 224,
    "crossvit_tiny_240": 240,
    "efficientformer_l1": 224,
    "efficientformerv2_s0": 224,
    "gcvit_tiny": 224,
    "hiera_tiny_224": 224,
    "test_maxvit": 160,
    "maxvit_pico_rw_256": 256,
    "mvitv2_tiny": 224,
    "twins_svt_small": 224,
    "vit_tiny_r_s16_p8_224": 224,
}

# Constructor arguments that shrink a model the ranking could only find in a large size; why in each.
SHRINK = {
    # base-size transformers (12-24 blocks of width 384-768): two blocks show the same code paths
    "beitv2_base_patch16_224": {"depth": 2},
    "cait_s24_224": {"depth": 2},
    "deepseek_vit_412m": {"depth": 2},
    "gemma4_vit_167m": {"depth": 2},
    "samvit_base_patch16": {"depth": 2},
    "qwen3_vit_88m": {"depth": 2},
    "naflexvit_base_patch16_gap": {"depth": 2},
}

# Options users turn on for compile, as separate cases: name -> (model, kwargs, image sizes).
OPTION_CASES = {
    # dynamic_img_size: one graph for every image size, the reason users turn it on with compile.
    "vit_tiny_patch16_224+dynamic_img_size": ("vit_tiny_patch16_224", {"dynamic_img_size": True}, (112, 96)),
    "deit_tiny_patch16_224+dynamic_img_size": ("deit_tiny_patch16_224", {"dynamic_img_size": True}, (112, 96)),
    "eva02_tiny_patch14_224+dynamic_img_size": ("eva02_tiny_patch14_224", {"dynamic_img_size": True}, (112, 84)),
    "test_vit+dynamic_img_size": ("test_vit", {"dynamic_img_size": True}, (160, 128)),
    # features_only: the backbone use (detection, segmentation) returns a list of feature maps.
    "resnet18+features_only": ("resnet18", {"features_only": True}, (96, 96)),
    "convnext_atto+features_only": ("convnext_atto", {"features_only": True}, (96, 96)),
}

# Models that fail to build or run eagerly, or take too long, found by check.py: name -> why.
LEFT_OUT = {
    "halonet_h1": "needs 256 pixels at least; 45 s eager under load",
    "mobilenetv5_300m": "300M parameters; 43 s eager under load",
    "hrnet_w18_small": "34 s eager under load (many parallel branches)",
    "nasnetalarge": "its only variant is large (331 pixels, 89M parameters)",
    "pnasnet5large": "its only variant is large (331 pixels, 86M parameters)",
    "convmixer_768_32": "32 blocks of width 768, no smaller variant and no depth argument",
    "vgg11": "133M parameters in its classifier; torchvision lists vgg11 already",
}


def _rank(name: str):
    if name.startswith("test_"):
        return (0, len(name), name)
    tokens = re.split(r"[_\-]", name)
    for rank, word in enumerate(SIZE_WORDS):
        if word in tokens:
            return (1 + rank, len(name), name)
    numbers = [int(n) for n in re.findall(r"\d+", name)] or [999]
    return (100, numbers[0], len(name), name)


def _picks() -> list[str]:
    import timm

    out = []
    for module in timm.list_modules():
        ranked = sorted(timm.list_models(module=module), key=_rank)
        chosen = PICKS.get(module) or ranked[:1]
        if ranked and ranked[0].startswith("test_") and module not in PICKS:
            real = [n for n in ranked if not n.startswith("test_")]
            chosen = ranked[:1] + real[:1]
        out += chosen
    return out


def names() -> list[str]:
    return [n for n in _picks() + list(OPTION_CASES) if n not in LEFT_OUT]


def _sum_outputs(output):
    if isinstance(output, (list, tuple)):
        return sum(o.float().mean() for o in output)
    return output.float().mean()


def _input_size(model_name: str, options: dict) -> tuple[dict, int]:
    """Constructor options and image size: models that take any size get SMALL_IMAGE (or their stated
    minimum); models whose size is fixed at construction are built for FIXED_IMAGE where they accept
    `img_size`, else keep their default."""
    from timm.models import get_pretrained_cfg

    cfg = get_pretrained_cfg(model_name)
    default = cfg.input_size[-1] if cfg else 224
    if name_size := SIZES.get(model_name):
        return options, name_size
    if cfg is not None and getattr(cfg, "fixed_input_size", False):
        if "img_size" in options:
            return options, options["img_size"]
        return {**options, "img_size": min(FIXED_IMAGE, default)}, min(FIXED_IMAGE, default)
    least = (getattr(cfg, "min_input_size", None) or (3, 0, 0))[-1]
    return options, max(min(SMALL_IMAGE, default), least)


def build(name: str) -> Case:
    import timm

    if name in OPTION_CASES:
        model_name, options, sizes = OPTION_CASES[name]
    else:
        model_name, options = name, dict(SHRINK.get(name, {}))
        options, size = _input_size(model_name, options)
        sizes = (size, size)
    torch.manual_seed(0)
    try:
        model = timm.create_model(model_name, pretrained=False, **options).eval()
    except TypeError:  # a fixed-size model without an img_size argument: its default size
        options.pop("img_size", None)
        model = timm.create_model(model_name, pretrained=False, **options).eval()
        sizes = (model.pretrained_cfg["input_size"][-1],) * 2
    channels = model.pretrained_cfg.get("input_size", (3,))[0]
    shapes = [(2, channels, sizes[0], sizes[0]), (3, channels, sizes[1], sizes[1])]

    def make(shape):
        return lambda: ((torch.randn(*shape),), {})

    return Case(model=model, inputs=[make(s) for s in shapes], loss=_sum_outputs,
                options={"model": model_name, **options})
