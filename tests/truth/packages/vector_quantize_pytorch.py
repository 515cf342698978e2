"""vector_quantize_pytorch 1.32.0: the quantizers, each with a small codebook, on token sequences
(batch 2 x 16 tokens, then 3 x 24) of width DIM. A few VectorQuantize cases turn on options users
set (cosine similarity, orthogonal regularisation, multiple heads), recorded in `options`.

The input requires grad: a quantizer sits after an encoder, and the EMA codebooks of the VQ family
have no parameters of their own, so without it the straight-through output has nothing to train.
The training step needs train mode: in eval the VQ family returns the codes without the
straight-through path, so the loss has no gradient.
"""
from __future__ import annotations

import torch

from . import Case

DIM = 32

# name -> (class name, constructor arguments)
MODELS = {
    "VectorQuantize": ("VectorQuantize", dict(dim=DIM, codebook_size=64)),
    "VectorQuantize+cosine_sim": ("VectorQuantize", dict(dim=DIM, codebook_size=64, use_cosine_sim=True)),
    "VectorQuantize+orthogonal_reg": ("VectorQuantize", dict(dim=DIM, codebook_size=64, orthogonal_reg_weight=10.0)),
    "VectorQuantize+heads": ("VectorQuantize", dict(dim=DIM, codebook_size=64, heads=4,
                                                    separate_codebook_per_head=True)),
    "ResidualVQ": ("ResidualVQ", dict(dim=DIM, num_quantizers=3, codebook_size=64)),
    "GroupedResidualVQ": ("GroupedResidualVQ", dict(dim=DIM, groups=2, num_quantizers=2, codebook_size=64)),
    "SimVQ": ("SimVQ", dict(dim=DIM, codebook_size=64)),
    "ResidualSimVQ": ("ResidualSimVQ", dict(dim=DIM, num_quantizers=2, codebook_size=64)),
    "FSQ": ("FSQ", dict(dim=DIM, levels=[8, 5, 5])),
    "ResidualFSQ": ("ResidualFSQ", dict(dim=DIM, levels=[8, 5, 5], num_quantizers=2)),
    "GroupedResidualFSQ": ("GroupedResidualFSQ", dict(dim=DIM, levels=[8, 5, 5], num_quantizers=2, groups=2)),
    "LFQ": ("LFQ", dict(dim=DIM, codebook_size=256)),
    "ResidualLFQ": ("ResidualLFQ", dict(dim=DIM, codebook_size=256, num_quantizers=2)),
    "GroupedResidualLFQ": ("GroupedResidualLFQ", dict(dim=DIM, codebook_size=256, num_quantizers=2, groups=2)),
}

# Left out: RandomProjectionQuantizer and BinaryMapper return indices or codes with nothing to train;
# HierarchicalVQ and LatentQuantize need arguments (scales, matching level counts) past a small case.
LEFT_OUT = {}

SHAPES = ((2, 16), (3, 24))


def names() -> list[str]:
    return [n for n in MODELS if n not in LEFT_OUT]


def _loss(output):
    """The quantized output's mean, plus the auxiliary (commitment) losses where the quantizer returns them."""
    if isinstance(output, torch.Tensor):
        return output.float().mean()
    parts = list(output)
    total = parts[0].float().mean() if isinstance(parts[0], torch.Tensor) else _loss(parts[0])
    for extra in parts[2:]:
        if isinstance(extra, torch.Tensor) and extra.is_floating_point() and extra.requires_grad:
            total = total + extra.float().sum()
    return total


def build(name: str) -> Case:
    import vector_quantize_pytorch as vq

    class_name, options = MODELS[name]
    torch.manual_seed(0)
    model = getattr(vq, class_name)(**options).eval()
    width = options.get("dim", options.get("bits"))

    def make(batch, tokens):
        # An encoder's output: it requires grad when training, not when serving (made under no_grad).
        return lambda: ((torch.randn(batch, tokens, width).requires_grad_(torch.is_grad_enabled()),), {})

    return Case(model=model, inputs=[make(b, n) for b, n in SHAPES], loss=_loss, options=options)
