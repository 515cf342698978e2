# `torch` is imported only inside a function (a lazy import in a CLI entry point); at module level
# only `from torch import nn` is bound. A guard written as `torch.compiler.is_compiling()` in
# forward would raise NameError: the fix must add a module-level `import torch`.
# tcfix: TCF101 (high), fix guards the print AND adds `import torch` at the top.
from torch import nn


class Scale(nn.Module):
    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        print("Scale", self.factor)
        return x * self.factor


def main():
    import torch

    model = torch.compile(Scale(2.0))
    print(model(torch.ones(3)))


if __name__ == "__main__":
    main()
