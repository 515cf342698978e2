"""A custom op that mutates its input and returns it, without the `torch.Tag.inplace` tag (the
usual first draft of an in-place kernel wrapper). torch refuses it at its first call, in eager
mode as under compile, and registering a fake does not change that ("The output of this custom
operator (1) must not also be an input", measured under torch 2.15). tcfix reports it, critical,
but must not suggest a fake: the remedy is the tag (torch then derives the fake) or returning
nothing."""
import torch


@torch.library.custom_op("ourlib::bump_", mutates_args=("x",))
def bump_(x: torch.Tensor) -> torch.Tensor:
    x.add_(1)
    return x
