"""In-place custom ops that need no fake: one tagged `torch.Tag.inplace` that mutates its first
argument and returns it (the shape of fused in-place kernels such as an in-place rotary or norm
update), and ones declaring what they mutate that return nothing. Measured under torch 2.15 with
`fullgraph=True`, eager and aot_eager backends: all compile with no fake registered (torch derives
the inplace op's fake, and an op with mutations and no outputs has nothing to fake). Reporting them
as "critical: fails under compile" would be false."""
import torch


@torch.library.custom_op("ourlib::scale_", mutates_args=("x",), tags=torch.Tag.inplace)
def scale_(x: torch.Tensor, factor: float) -> torch.Tensor:
    x.mul_(factor)
    return x


@torch.library.custom_op("ourlib::shift_", mutates_args=["x"], tags=(torch.Tag.inplace,))
def shift_(x: torch.Tensor, by: torch.Tensor) -> torch.Tensor:
    x.add_(by)
    return x


@torch.library.custom_op("ourlib::clamp_into", mutates_args=("out",))
def clamp_into(out: torch.Tensor, x: torch.Tensor) -> None:
    out.copy_(x.clamp(-1, 1))


@torch.library.custom_op("ourlib::touch", mutates_args="unknown")
def touch(x: torch.Tensor) -> None:
    x.add_(0)
