"""diffusers 0.42.1: UNets, VAEs and diffusion transformers from small configs (sizes of the kind the
package's own tests use), random weights. Each entry: the class, its small config, and the inputs of one
denoising (or encoding) step at batch b (2, then 3); the image/latent size stays fixed, as in a
pipeline, so the batch is what varies.
"""
from __future__ import annotations

import torch

from . import Case


def _unet2d(b):
    return (torch.randn(b, 3, 32, 32), torch.tensor([10] * b)), {}


def _unet_cond(channels, text_dim):
    def inputs(b):
        return (torch.randn(b, channels, 32, 32), torch.tensor([10] * b)), {
            "encoder_hidden_states": torch.randn(b, 8, text_dim)}

    return inputs


def _image(channels, size):
    return lambda b: ((torch.randn(b, channels, size, size),), {})


def _dit(b):
    return (), {"hidden_states": torch.randn(b, 4, 8, 8), "timestep": torch.tensor([10] * b),
                "class_labels": torch.tensor([1] * b)}


def _sd3(b):
    return (), {"hidden_states": torch.randn(b, 4, 16, 16), "encoder_hidden_states": torch.randn(b, 8, 32),
                "pooled_projections": torch.randn(b, 64), "timestep": torch.tensor([10] * b)}


def _flux(b):
    tokens, text = 16, 8
    return (), {"hidden_states": torch.randn(b, tokens, 4), "encoder_hidden_states": torch.randn(b, text, 32),
                "pooled_projections": torch.randn(b, 32), "timestep": torch.tensor([1.0] * b),
                "img_ids": torch.zeros(tokens, 3), "txt_ids": torch.zeros(text, 3)}


def _pixart(b):
    return (), {"hidden_states": torch.randn(b, 4, 8, 8), "encoder_hidden_states": torch.randn(b, 8, 32),
                "timestep": torch.tensor([10] * b),
                "added_cond_kwargs": {"resolution": None, "aspect_ratio": None}}


UNET_COND = dict(
    block_out_channels=(32, 64), layers_per_block=1, sample_size=32, in_channels=4, out_channels=4,
    down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
    cross_attention_dim=32, attention_head_dim=8, norm_num_groups=32,
)
VAE = dict(
    block_out_channels=(32, 64), in_channels=3, out_channels=3, latent_channels=4, norm_num_groups=32,
    down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
    up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
)

# name -> (class name, config, inputs(batch) -> (args, kwargs))
MODELS = {
    "UNet2DModel": ("UNet2DModel", dict(
        sample_size=32, in_channels=3, out_channels=3, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D")), _unet2d),
    "UNet2DConditionModel": ("UNet2DConditionModel", UNET_COND, _unet_cond(4, 32)),
    # the SDXL-style unet: added time ids and a linear projection of the text embeddings
    "UNet2DConditionModel+linear_projection": ("UNet2DConditionModel", {
        **UNET_COND, "use_linear_projection": True, "attention_head_dim": (2, 4)}, _unet_cond(4, 32)),
    "AutoencoderKL": ("AutoencoderKL", VAE, _image(3, 32)),
    "AutoencoderTiny": ("AutoencoderTiny", dict(
        encoder_block_out_channels=(32, 32), decoder_block_out_channels=(32, 32), num_encoder_blocks=(1, 1),
        num_decoder_blocks=(1, 1), latent_channels=4), _image(3, 32)),
    "VQModel": ("VQModel", {**VAE, "num_vq_embeddings": 32, "vq_embed_dim": 4}, _image(3, 32)),
    "DiTTransformer2DModel": ("DiTTransformer2DModel", dict(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=8, num_layers=2,
        sample_size=8, patch_size=2, num_embeds_ada_norm=1000), _dit),
    "PixArtTransformer2DModel": ("PixArtTransformer2DModel", dict(
        sample_size=8, num_layers=2, patch_size=2, attention_head_dim=8, num_attention_heads=2, in_channels=4,
        cross_attention_dim=16, out_channels=8, caption_channels=32, use_additional_conditions=False), _pixart),
    "SD3Transformer2DModel": ("SD3Transformer2DModel", dict(
        sample_size=16, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=8, num_attention_heads=4,
        caption_projection_dim=32, joint_attention_dim=32, pooled_projection_dim=64, out_channels=4), _sd3),
    "FluxTransformer2DModel": ("FluxTransformer2DModel", dict(
        patch_size=1, in_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=16,
        num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32, axes_dims_rope=(4, 4, 8)), _flux),
}

# Left out: UNet1DModel (its channel bookkeeping for the Fourier time embedding did not fit a small
# config in the time given).
LEFT_OUT = {}


def names() -> list[str]:
    return [n for n in MODELS if n not in LEFT_OUT]


def _loss(output):
    out = output[0] if isinstance(output, tuple) else getattr(output, "sample", None)
    if out is None:
        out = next(v for v in output.values() if isinstance(v, torch.Tensor))
    return out.float().mean()


def build(name: str) -> Case:
    import diffusers

    class_name, config, inputs = MODELS[name]
    torch.manual_seed(0)
    model = getattr(diffusers, class_name)(**config).eval()
    return Case(model=model, inputs=[(lambda b=b: inputs(b)) for b in (2, 3)], loss=_loss,
                options={"class": class_name, "config": config})
