"""monai 1.6.1: networks from monai.networks.nets, 2-D, with small channel counts and a 32x32
single-channel image (medical images are single-channel; 2-D keeps each case to seconds on CPU).
Each entry: the class name and its constructor arguments; inputs: batch 2 then 3.
"""
from __future__ import annotations

import torch

from . import Case

SIZE = 32

# name -> (class name in monai.networks.nets, constructor arguments)
MODELS = {
    "UNet": ("UNet", dict(spatial_dims=2, in_channels=1, out_channels=2, channels=(8, 16, 32), strides=(2, 2),
                          num_res_units=1)),
    "BasicUNet": ("BasicUNet", dict(spatial_dims=2, in_channels=1, out_channels=2, features=(8, 8, 16, 32, 64, 8))),
    "BasicUNetPlusPlus": ("BasicUNetPlusPlus", dict(spatial_dims=2, in_channels=1, out_channels=2,
                                                    features=(8, 8, 16, 32, 64, 8))),
    "AttentionUnet": ("AttentionUnet", dict(spatial_dims=2, in_channels=1, out_channels=2, channels=(8, 16, 32),
                                            strides=(2, 2))),
    "SegResNet": ("SegResNet", dict(spatial_dims=2, init_filters=8, in_channels=1, out_channels=2)),
    "SegResNetDS": ("SegResNetDS", dict(spatial_dims=2, init_filters=8, in_channels=1, out_channels=2)),
    "DynUNet": ("DynUNet", dict(spatial_dims=2, in_channels=1, out_channels=2, kernel_size=(3, 3, 3),
                                strides=(1, 2, 2), upsample_kernel_size=(2, 2))),
    "UNETR": ("UNETR", dict(in_channels=1, out_channels=2, img_size=(SIZE, SIZE), spatial_dims=2, feature_size=8,
                            hidden_size=64, mlp_dim=128, num_heads=4)),
    "SwinUNETR": ("SwinUNETR", dict(in_channels=1, out_channels=2, spatial_dims=2, feature_size=12,
                                    depths=(1, 1, 1, 1))),
    "ViT": ("ViT", dict(in_channels=1, img_size=(SIZE, SIZE), patch_size=(8, 8), spatial_dims=2, hidden_size=64,
                        mlp_dim=128, num_layers=2, num_heads=4, classification=True, num_classes=2)),
    "DenseNet121": ("DenseNet121", dict(spatial_dims=2, in_channels=1, out_channels=2)),
    "EfficientNetBN": ("EfficientNetBN", dict(model_name="efficientnet-b0", spatial_dims=2, in_channels=1,
                                              num_classes=2, pretrained=False)),
    "FlexibleUNet": ("FlexibleUNet", dict(in_channels=1, out_channels=2, backbone="efficientnet-b0", spatial_dims=2,
                                          pretrained=False)),
    "HighResNet": ("HighResNet", dict(spatial_dims=2, in_channels=1, out_channels=2)),
    "VarAutoEncoder": ("VarAutoEncoder", dict(spatial_dims=2, in_shape=(1, SIZE, SIZE), out_channels=1,
                                              latent_size=8, channels=(8, 16), strides=(2, 2))),
    "Classifier": ("Classifier", dict(in_shape=(1, SIZE, SIZE), classes=2, channels=(8, 16), strides=(2, 2))),
    "MedNeXt": ("MedNeXt", dict(spatial_dims=2, init_filters=8, in_channels=1, out_channels=2,
                                blocks_down=(1, 1, 1, 1), blocks_bottleneck=1, blocks_up=(1, 1, 1, 1))),
    "AutoencoderKL": ("AutoencoderKL", dict(spatial_dims=2, in_channels=1, out_channels=1, channels=(8, 16),
                                            latent_channels=4, num_res_blocks=1, norm_num_groups=8,
                                            attention_levels=(False, True))),
    "VQVAE": ("VQVAE", dict(spatial_dims=2, in_channels=1, out_channels=1, channels=(8, 16), num_res_channels=8,
                            num_res_layers=1, downsample_parameters=((2, 4, 1, 1), (2, 4, 1, 1)),
                            upsample_parameters=((2, 4, 1, 1, 0), (2, 4, 1, 1, 0)), num_embeddings=16,
                            embedding_dim=4)),
    # a denoising step: the image and one timestep per sample
    "DiffusionModelUNet": ("DiffusionModelUNet", dict(spatial_dims=2, in_channels=1, out_channels=1,
                                                      channels=(8, 16), attention_levels=(False, True),
                                                      num_res_blocks=1, num_head_channels=8, norm_num_groups=8)),
}

TIMESTEPS = {"DiffusionModelUNet"}

LEFT_OUT = {
    "VarAutoEncoder": "backward fails eagerly: its reparameterisation modifies exp()'s output in place",
}

# SwinUNETR merges patches four times (32x down): a 32-pixel image leaves 1x1 maps its norm rejects.
SIZES = {"SwinUNETR": 64}


def names() -> list[str]:
    return [n for n in MODELS if n not in LEFT_OUT]


def _first_tensor(output):
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, dict):
        return _first_tensor(next(iter(output.values())))
    return _first_tensor(output[0])


def build(name: str) -> Case:
    import monai.networks.nets as nets

    class_name, options = MODELS[name]
    torch.manual_seed(0)
    model = getattr(nets, class_name)(**options).eval()
    timestep = name in TIMESTEPS
    size = SIZES.get(name, SIZE)

    def make(batch):
        def inputs():
            image = torch.randn(batch, 1, size, size)
            return ((image, torch.randint(0, 1000, (batch,))) if timestep else (image,)), {}

        return inputs

    return Case(model=model, inputs=[make(2), make(3)], loss=lambda out: _first_tensor(out).float().mean(),
                options=options)
