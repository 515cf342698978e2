"""TCF303 negative: the default lets a size become dynamic after its first change, and
dynamic=True starts dynamic; dynamic=False with a single call recompiles nothing."""
import torch


def train(model, loader):
    compiled = torch.compile(model)
    for batch in loader:
        compiled(batch)


def train_dynamic(model, loader):
    compiled = torch.compile(model, dynamic=True)
    for batch in loader:
        compiled(batch)


def export_once(model, example):
    compiled = torch.compile(model, dynamic=False)
    return compiled(example)


def loop_calls_the_plain_model(model, loader):
    compiled = torch.compile(model, dynamic=False)
    for batch in loader:
        model(batch)
    return compiled
