"""Two CPU processes (gloo), each compiling a model whose forward prints and whose rank-dependent
branch breaks the graph on tensor data: TORCH_TRACE writes one log per rank."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn


class RankNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        x = self.linear(x)
        print("rank", dist.get_rank(), x.shape)
        if x.mean() > 0:
            x = x.relu()
        return x


def worker(rank: int, world: int, port: str):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = port
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(rank)
    model = torch.compile(RankNet(), backend="eager")
    for _ in range(2):
        out = model(torch.randn(2, 4))
        dist.all_reduce(out)
    dist.destroy_process_group()


if __name__ == "__main__":
    port = sys.argv[1] if len(sys.argv) > 1 else "29517"
    mp.spawn(worker, args=(2, port), nprocs=2)
