#!/usr/bin/env python3
"""Runs models of the truth tier's catalogue under torch.compile, as a user would, each in its own process.

usage: run_model.py PACKAGE TIMEOUT [NAME OUTDIR]...

A worker of tests/truth/run.py: it imports torch and the package once, then forks one child per model
(a crash or a hang of one model kills only its child: the worker records it and goes on; a child past
TIMEOUT seconds is killed). Each child writes Dynamo's structured log (TORCH_TRACE) of every phase to
OUTDIR/trace, for `tcfix --trace`. Phases, each from a fresh Dynamo cache:

  eager     the model as built, no compile: outputs of the first input (no grad), then the gradients of
            the case's loss in eval mode (deterministic, no dropout); the reference a fix must keep.
  infer     torch.compile(model, backend=eager-counting), no grad: inputs 0, 1, 0 (a new size, then the
            first again: a size that should be dynamic shows as a recompile, once).
  train     model.train(), torch.compile(backend=aot_eager-counting), one step: loss.backward().
  generate  instead of infer and train where the case decodes: forward compiled, generate() run
            eagerly around it.

Each child writes OUTDIR/result.json (per phase: graphs, graph_breaks, recompiles, eager_frames, error, seconds)
and OUTDIR/outputs.pt (the eager reference and the compiled outputs, as float64 digests). A failure to
build or to run eagerly is recorded with its error and the other phases are skipped; a failing
compiled phase is recorded and the next phase still runs.
"""
from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import sys
import time
import traceback
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402  (after the environment above)
from torch._dynamo.backends.debugging import aot_eager  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402

from packages import package_module  # noqa: E402

RECOMPILE_LOGGER = "torch._dynamo.guards.__recompiles"
GUARD_LINE = re.compile(r"^\s*-\s*(.*)$")


class Recompiles(logging.Handler):
    """Counts the recompiles Dynamo logs (one record per recompile, its failed guards listed)."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        lines = [m.group(1).split("  #")[0].strip() for line in record.getMessage().splitlines()[1:]
                 if (m := GUARD_LINE.match(line))]
        self.reasons.append("; ".join(lines)[:300])


def digest(tree) -> list[list[float]]:
    """Each tensor leaf as (sum, sum of |x|, numel) in float64: enough to see a fix change a result,
    small enough to keep for hundreds of models."""
    leaves, _ = tree_flatten(tree)
    out = []
    for leaf in leaves:
        if hasattr(leaf, "to_tuple"):  # transformers' ModelOutput flattens to itself
            out.extend(digest(leaf.to_tuple()))
        elif isinstance(leaf, torch.Tensor):
            out.append(tensor_digest(leaf.detach()))
    return out


def tensor_digest(x: torch.Tensor) -> list[float]:
    """(sum, sum of |x|, numel); integer and bool tensors (ids, masks) by their sum alone."""
    if x.is_complex():
        x = x.to(torch.complex128)
        return [float(x.sum().real), float(x.abs().sum()), float(x.numel())]
    if x.is_floating_point():
        x = x.to(torch.float64)
        return [float(x.sum()), float(x.abs().sum()), float(x.numel())]
    return [float(x.to(torch.float64).sum()), 0.0, float(x.numel())]


def gradients(model) -> list[list[float]]:
    return [[float(p.grad.double().sum()), float(p.grad.double().abs().sum())] if p.grad is not None else [0.0, 0.0]
            for _, p in sorted(model.named_parameters(), key=lambda kv: kv[0])]


def eager_gradients(model, case) -> list[list[float]]:
    """The gradients of one eager step: in eval mode (no dropout: comparable across runs), or in
    train mode for a model whose eval output carries no gradient (a quantizer returns codes)."""
    model.zero_grad(set_to_none=True)
    loss = case.loss(call(model, case.inputs[0]))
    if not loss.requires_grad:
        model.train()
        loss = case.loss(call(model, case.inputs[0]))
        model.eval()
    loss.backward()
    grads = gradients(model)
    model.zero_grad(set_to_none=True)
    return grads


class Phase:
    """One compiled phase's counts, read from Dynamo's counters and recompile log."""

    def __init__(self, name: str):
        self.name = name
        self.graphs = 0
        self.error: str | None = None
        self.seconds = 0.0
        self.recompiles = Recompiles()

    def backend(self, base):
        def counting(gm, example_inputs):
            compiled = base(gm, example_inputs) if base else gm.forward
            self.graphs += 1
            return compiled
        return counting

    def result(self) -> dict:
        breaks = sum(counters["graph_break"].values())
        frames = counters["frames"]
        return {
            "graphs": self.graphs,
            "graph_breaks": breaks,
            "recompiles": len(self.recompiles.reasons),
            "recompile_reasons": self.recompiles.reasons[:20],
            "eager_frames": frames["total"] - frames["ok"],
            "frames": frames["total"],
            "break_reasons": sorted({first_line(r) for r in counters["graph_break"]})[:20],
            "error": self.error,
            "seconds": round(self.seconds, 2),
        }


def first_line(text: str) -> str:
    return text.strip().splitlines()[0][:200] if text.strip() else ""


@contextlib.contextmanager
def phase(name: str, results: dict):
    torch._dynamo.reset()
    counters.clear()
    p = Phase(name)
    logger = logging.getLogger(RECOMPILE_LOGGER)
    logger.addHandler(p.recompiles)
    start = time.monotonic()
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield p
    except Exception as err:  # noqa: BLE001 - a failing phase is a result, not a crash
        p.error = f"{type(err).__name__}: {first_line(str(err))}"
        traceback.print_exc(file=sys.stderr)
    finally:
        p.seconds = time.monotonic() - start
        logger.removeHandler(p.recompiles)
        results[name] = p.result()


def call(model, step):
    torch.manual_seed(0)
    args, kwargs = step()
    return model(*args, **kwargs)


def run_one(package: str, name: str, outdir: Path) -> int:
    """One model, in the forked child: every phase, then result.json and outputs.pt."""
    result: dict = {"package": package, "name": name, "torch": torch.__version__, "phases": {}}
    outputs: dict = {}
    started = time.monotonic()

    def finish(status: str, error: str | None = None) -> int:
        result.update(status=status, error=error, seconds=round(time.monotonic() - started, 2))
        torch.save(outputs, outdir / "outputs.pt")
        (outdir / "result.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        return 0

    try:
        torch.manual_seed(0)
        case = package_module(package).build(name)
        model = case.model.eval()
        result["options"] = case.options
        with torch.no_grad():
            outputs["eager"] = digest(call(model, case.inputs[0]))
        outputs["eager_grads"] = eager_gradients(model, case)
    except Exception as err:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        return finish("eager-failed", f"{type(err).__name__}: {first_line(str(err))}")

    phases = result["phases"]
    if case.generate is None:
        compiled_phases(model, case, phases, outputs)
    else:
        with phase("generate", phases) as p:
            eager_forward = model.forward
            model.forward = torch.compile(eager_forward, backend=p.backend(None))
            try:
                torch.manual_seed(0)
                with torch.no_grad():
                    outputs["generate"] = digest(case.generate(model))
            finally:
                model.forward = eager_forward
    return finish("ran")


def compiled_phases(model, case, phases: dict, outputs: dict) -> None:
    """Inference at two sizes (then the first again), and one training step."""
    with phase("infer", phases) as p:
        compiled = torch.compile(model, backend=p.backend(None))
        with torch.no_grad():
            outs = [digest(call(compiled, step)) for step in (case.inputs[0], case.inputs[1], case.inputs[0])]
        outputs["infer"] = outs[0]
    with phase("train", phases) as p:
        model.train()
        compiled = torch.compile(model, backend=p.backend(aot_eager))
        case.loss(call(compiled, case.inputs[0])).backward()
        model.zero_grad(set_to_none=True)
        model.eval()


def trace_to(directory: Path) -> None:
    """Points Dynamo's structured log at `directory`: the handler opens its file on the first event
    (and reopens after a fork), so the child's events land there and nowhere else."""
    from torch._logging import _internal

    handler = _internal.LOG_TRACE_HANDLER
    if handler is None:
        raise SystemExit("truth: the worker must be started with TORCH_TRACE set")
    handler.root_dir = str(directory)


def crashed(outdir: Path, package: str, name: str, status: str, error: str, seconds: float) -> None:
    result = {"package": package, "name": name, "status": status, "error": error, "phases": {},
              "seconds": round(seconds, 1)}
    (outdir / "result.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")


def main() -> int:
    package, timeout, jobs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    torch._logging.set_logs(dynamo=logging.ERROR, recompiles=True)
    logging.getLogger(RECOMPILE_LOGGER).propagate = False
    torch.set_num_threads(1)
    package_module(package)  # imported once, shared by every child
    for name, outdir in zip(jobs[::2], map(Path, jobs[1::2])):
        outdir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                trace_to(outdir / "trace")
                with open(outdir / "stderr.txt", "w") as err:
                    os.dup2(err.fileno(), 2)
                    code = run_one(package, name, outdir)
            finally:
                os._exit(code)
        status = wait(pid, timeout)
        if not (outdir / "result.json").is_file():
            tail = (outdir / "stderr.txt").read_text(errors="replace").strip().splitlines()[-1:] if (outdir / "stderr.txt").is_file() else []
            crashed(outdir, package, name, "timeout" if status is None else "crashed",
                    f"exit {status}: {(tail or [''])[0][:200]}" if status is not None else f"over {timeout:.0f} s",
                    time.monotonic() - started)
        print(f"{name}\t{json.loads((outdir / 'result.json').read_text()).get('status')}", flush=True)
    return 0


def wait(pid: int, timeout: float):
    """The child's exit status, or None when it ran past `timeout` seconds and was killed."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main())
