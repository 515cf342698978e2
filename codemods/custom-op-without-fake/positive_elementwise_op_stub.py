"""TCF401 positive with a DisplayOnly stub: an elementwise custom op (`x * 2`, one tensor input,
`-> torch.Tensor`): the fake output mirrors the input, so tcfix shows
`@scaled_gelu.register_fake` returning `torch.empty_like(x)`."""
import torch


@torch.library.custom_op("mylib::double", mutates_args=())
def double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@torch.library.custom_op("mylib::fast_sin", mutates_args=())
def fast_sin(x: torch.Tensor) -> torch.Tensor:
    """A stand-in for a CUDA kernel."""
    return torch.sin(x)


def model(x: torch.Tensor) -> torch.Tensor:
    return fast_sin(double(x)) + 1
