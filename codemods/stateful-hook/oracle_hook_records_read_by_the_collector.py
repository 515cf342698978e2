"""Oracle fixture for stateful-hook (TCF202), the form whose records the collector itself reads.

A GRU-free sequence tagger: a stack of residual feed-forward blocks that forward runs in a loop. A
diagnostics recorder hooks a few chosen blocks; each hook keeps the block output's RMS under the
labels it was registered with, but only on steps where the training loop turned
`recorder.want_rms` on. The loop reads the numbers back through `recorder.drain()`.

Dynamo guards on `recorder.want_rms`, so its first flip recompiles forward. `torch.compiler.disable`
on a hook of looped blocks would send forward eager, so tcfix takes the flag test out of the hook
(it records on every call) and makes `drain`, the loop over the records in the recorder's own class,
read them only while `want_rms` is on: what `drain` returns is unchanged as long as the flag keeps
its value from forward to the drain, as in this loop. Unsafe, because that last condition is the
caller's.
"""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class Tagger(nn.Module):
    def __init__(self, vocab: int = 40, dim: int = 32, depth: int = 4, tags: int = 7):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.out = nn.Linear(dim, tags)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.out(x)


class DiagnosticsRecorder:
    def __init__(self):
        self.want_rms = False
        self.rms: dict[str, torch.Tensor] = {}

    def start_step(self, want_rms: bool):
        self.want_rms = want_rms
        self.rms.clear()

    def drain(self) -> dict[str, float]:
        numbers = {}
        for name, value in self.rms.items():
            numbers[name] = float(value)
        self.rms.clear()
        return numbers


def watch_blocks(model: Tagger, recorder: DiagnosticsRecorder, names: dict[int, list[str]]):
    handles = []
    for position, labels in names.items():
        label_tuple = tuple(labels)

        def keep_rms(module, inputs, output, label_tuple=label_tuple):
            if not recorder.want_rms:
                return
            if not torch.is_tensor(output):
                return
            rms = output.detach().float().pow(2).mean().sqrt()
            for label in label_tuple:
                recorder.rms[f"rms/{label}"] = rms

        handles.append(model.blocks[position].register_forward_hook(keep_rms))
    return handles


def _watched_tagger():
    model = Tagger()
    model.recorder = DiagnosticsRecorder()
    watch_blocks(model, model.recorder, {0: ["first"], 3: ["last", "top"]})
    return model


def _step(tokens, want_rms: bool):
    def step(model):
        model.recorder.start_step(want_rms)
        return (tokens,)

    return step


def oracle_cases():
    batches = [torch.randint(0, 40, (2, 12)) for _ in range(5)]
    want = [False, True, False, True, False]
    return [
        {
            "name": "rms-on-some-steps",
            "factory": _watched_tagger,
            "inputs": [_step(tokens, w) for tokens, w in zip(batches, want)],
            "observe": lambda model: model.recorder.drain(),
            "train": True,
            "unsafe_fixes": True,
            "expect": {
                "recompiles matching want_rms": (">=1", 0),
                "graph_breaks": (0, 0),
                "eager_frames": (0, 0),
            },
        },
    ]
