"""The truth tier's model catalogue: one module per PyPI package, each with the same two functions.

    names() -> list[str]          the models this package contributes, stable ids within the package
    build(name) -> Case           a fresh model (random weights, no download) with its inputs

`Case` is the contract between a package module and the driver (tests/truth/run_model.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

PACKAGES = (
    "transformers",
    "timm",
    "torchvision",
    "diffusers",
    "open_clip",
    "segmentation_models_pytorch",
    "kornia",
    "monai",
    "vector_quantize_pytorch",
)


@dataclass
class Case:
    """One model, built as a user builds it, and how to call it.

    model:    an nn.Module in eval mode, weights random (torch.manual_seed(0) before building).
    inputs:   two or more callables, each returning (args, kwargs) for one call: the first two differ
              in batch size, sequence length or image size where the model allows, so that a
              size that should be dynamic shows as a recompile; called after torch.manual_seed.
    loss:     output -> 0-d tensor for one training step (the model's own loss where it has one,
              else a sum or mean of its main output).
    generate: optional (compiled_model) -> Any: a decoding run (prefill, then decode steps), for
              models that generate; the model's forward is compiled, generate() itself is not. A
              case that decodes runs only that phase (after the eager reference): its family's base
              model has a case of its own for inference and training.
    options:  what the constructor was given beyond its defaults (a small size, an option users turn
              on for compile): recorded with the results, so the default path is visible.
    """

    model: Any
    inputs: list[Callable[[], tuple[tuple, dict]]]
    loss: Callable[[Any], Any]
    generate: Optional[Callable[[Any], Any]] = None
    options: dict = field(default_factory=dict)


def package_module(package: str):
    import importlib

    return importlib.import_module(f"packages.{package}")
