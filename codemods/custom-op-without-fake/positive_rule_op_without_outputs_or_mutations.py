"""A custom op that returns nothing and declares no mutation (a side-effect-only op, such as a
statistics recorder). It still needs a fake under compile: measured under torch 2.15, compiling a
function that calls it fails with "There was no fake impl registered". Only ops that declare
what they mutate may go without one."""
import torch


@torch.library.custom_op("ourlib::record", mutates_args=())
def record(x: torch.Tensor) -> None:
    _ = x.sum()
