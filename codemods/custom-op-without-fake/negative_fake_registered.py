"""TCF401 negative: fakes registered as a decorator, as a call, by op name through
`torch.library.register_fake`, with the old `impl_abstract`; and an op that returns nothing
(mutation only)."""
import torch


@torch.library.custom_op("mylib::a", mutates_args=())
def op_a(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@op_a.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("mylib::b", mutates_args=())
def op_b(x: torch.Tensor) -> torch.Tensor:
    return x + 1


op_b.register_fake(lambda x: torch.empty_like(x))


@torch.library.custom_op("mylib::c", mutates_args=())
def op_c(x: torch.Tensor) -> torch.Tensor:
    return x - 1


@torch.library.register_fake("mylib::c")
def _c_fake(x):
    return torch.empty_like(x)


@torch.library.custom_op("mylib::d", mutates_args=())
def op_d(x: torch.Tensor) -> torch.Tensor:
    return x * 3


@torch.library.impl_abstract("mylib::d")
def _d_abstract(x):
    return torch.empty_like(x)


@torch.library.custom_op("mylib::fill_", mutates_args=("out",))
def fill_(out: torch.Tensor, value: float) -> None:
    out.fill_(value)
