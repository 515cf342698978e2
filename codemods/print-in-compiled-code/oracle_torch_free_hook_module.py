"""Oracle fixture for print-in-compiled-code (TCF101) in a module that keeps torch out of its import.

A debugging helper module hangs a shape logger on a model's first layer. The module imports nothing from
torch at module level (a CLI imports it before it chooses a backend), so the guard cannot rely on a
module-level `import torch`, and a Safe fix must not add one: tcfix writes `import torch` as the
first line of the hook itself. Dynamo traces a local import without a graph break (torch 2.15), so
the print's break is gone and the fixed hook compiles into the model's graph. The model itself is
built inside `oracle_cases()`, with torch imported there.
"""


def attach_shape_logger(model, name):
    def log_shape(module, inputs, output):
        print(name, "output", tuple(output.shape))

    return model.register_forward_hook(log_shape)


def oracle_cases():
    import torch
    from torch import nn

    def factory():
        model = nn.Sequential(nn.Linear(12, 24), nn.GELU(), nn.Linear(24, 4))
        attach_shape_logger(model[0], "stem")
        return model

    batches = [(torch.randn(3, 12),) for _ in range(3)]
    return [
        {
            "name": "inference",
            "factory": lambda: factory().eval(),
            "inputs": batches,
            "expect": {"graph_breaks": (">=1", 0), "graphs": (None, 1), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": factory,
            "inputs": batches,
            "train": True,
            "expect": {"graph_breaks": (">=1", 0), "graphs": (None, 1), "eager_frames": (None, 0)},
        },
    ]
