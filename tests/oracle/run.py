#!/usr/bin/env python3
"""The tcfix oracle: proves each tcfix fix under real torch.compile.

Snapshots prove that tcfix changed the text the way we meant; this proves that the change matters.
For every fixture `codemods/<rule>/<name>.py` that defines a module-level `oracle_cases()`:

  1. copy it to a temp dir and run `tcfix --apply [--unsafe-fixes]` on the copy;
  2. import the original and the fixed file as two separate modules;
  3. for each case, compile the case's target on each side with a counting backend, run its inputs, and
     measure graph breaks, recompiles (with the failed guard text), graphs compiled and frames that
     Dynamo gave up on (they run eagerly);
  4. check the case's expectation, and that every output (and gradient, for `train=True`) of the fixed,
     compiled side equals the eager output of the original.

Fixture contract — `oracle_cases()` returns a list of dicts:

  name          str, unique within the fixture.
  factory       () -> nn.Module or function: the thing to compile. Called right after
                torch.manual_seed(0), once per run (before/compiled, after/compiled, reference/eager).
  inputs        list of steps; a step is a tuple of positional args, or a callable
                `step(target) -> tuple` that may first mutate state (flip a flag, grow a length).
                `target` is the uncompiled object the factory returned.
  expect        {key: (before, after)}. A key is a measure — graph_breaks, recompiles, graphs,
                eager_frames — optionally followed by " matching REGEX" to count only the events whose
                reason matches (re.search): "recompiles matching \\['pe'\\]" counts only recompiles
                whose failed guard names the `pe` buffer, since a new input length legitimately
                recompiles once for dynamic shapes. Each bound is an int (exactly that many), a string
                "==N", ">=N", "<=N", ">N", "<N", or None (not checked).
                The reasons matched: graph_breaks — Dynamo's break message; recompiles — the failed
                guard expression of every cache entry (source comments stripped), joined by "; ";
                eager_frames — frames Dynamo gave up on and ran eagerly (a graph break in a loop,
                GB7000, is counted here and not in graph_breaks), with the unsupported constructs
                Dynamo met in the run as reason. graphs counts backend calls.
  train         optional bool: also compare parameter gradients after `output.sum().backward()`
                (the target must then be an nn.Module).
  observe       optional `observe(target) -> any pytree` read after every step and compared like
                outputs: state a fix must keep (the norms a hook recorded, a counter).
  atol, rtol    optional floats for torch.allclose (defaults 1e-6, 1e-5).
  unsafe_fixes  optional bool: run tcfix with --unsafe-fixes for this case.
  backend       optional "aot_eager": the counting backend hands each graph to AOTAutograd, as
                inductor does. Without it the backend returns the graph as it is, and a frame that
                AOTAutograd gives up on (a bool-mask index_put's backward) looks compiled. A graph
                is counted once the backend returned it; one it gave up on lands in eager_frames.
  no_grad       optional bool: run every step under torch.no_grad() (how a model serves).
  whole_model   optional bool: the case is a whole model with hazards of several rules, and besides
                `expect` (today's counts, pinned) it checks the issue #13 targets of a whole model:
                at every fix level no count gets worse (graphs, graph breaks, eager frames,
                recompiles: after <= before) and recompiles go down where there were some; with
                --unsafe-fixes, one graph per compile of the model (no graph break, no eager frame,
                and graphs == 1 + recompiles). tcfix may leave such a file unchanged (the safe pass
                having nothing to do is a result too); the report lists what tcfix still reports
                on the fixed file.
  gaps          optional {target: reason or tuple of reasons}: the whole-model targets that today's
                fixes do not reach, each with the hazards that remain and the fixes they need. A listed target that is
                missed shows as GAP (with its reason, in every report) and does not fail the run; a
                listed target that is met fails it (the gap closed: remove it and update `expect`),
                and so does a missed target that is not listed. The targets are named "graphs",
                "graph_breaks", "eager_frames", "recompiles" (not worse), "recompiles go down" and
                "one graph per frame".
  baseline      optional str: cases of one fixture with the same baseline share the runs of the
                original (compiled and eager), which do not depend on the fix level: give it to
                cases that differ only in `unsafe_fixes`.

oracle_cases() is called after torch.manual_seed(0), once per run, so inputs it builds are fresh and
identical on every side. The whole-model fixtures live in tests/oracle/models/ (rule "whole-model").

Usage: python tests/oracle/run.py --tcfix PATH [--filter SUBSTR] [-v] [FIXTURE_DIRS...]
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import difflib
import importlib.util
import io
import itertools
import json
import logging
import math
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch._dynamo
from torch._dynamo.backends.debugging import aot_eager
from torch._dynamo.utils import counters
from torch.utils._pytree import tree_flatten

REPO = Path(__file__).resolve().parents[2]
WHOLE_MODELS = REPO / "tests" / "oracle" / "models"
MEASURES = ("graph_breaks", "recompiles", "graphs", "eager_frames")
# Dynamo logs "Recompiling function ..." on this artifact logger (torch/_dynamo/guards.py,
# getArtifactLogger(__name__, "recompiles")); it only emits once `recompiles` logging is enabled.
RECOMPILE_LOGGER = "torch._dynamo.guards.__recompiles"
# A failed guard line in that message: "- 0/1: <guard expression>   # <source line>  # <file:line>".
GUARD_LINE = re.compile(r"^\s*- (\d+/\d+: .*)$")
BOUND = re.compile(r"^\s*(==|>=|<=|>|<)?\s*(\d+)\s*$")
_module_ids = itertools.count()


# ---------------------------------------------------------------------------------------------------
# What one run of one case on one side saw.


@dataclass
class Run:
    graph_breaks: list[str] = field(default_factory=list)  # one reason per break
    recompiles: list[str] = field(default_factory=list)  # failed guard text, one per recompile
    eager_frames: list[str] = field(default_factory=list)  # frames Dynamo gave up on
    graphs: int = 0  # backend calls
    outputs: list = field(default_factory=list)  # per step: (leaves, treespec) of the output
    observed: list = field(default_factory=list)  # per step: (leaves, treespec) of case["observe"]
    grads: list = field(default_factory=list)  # per step: {param name: grad}

    def events(self, measure: str, pattern: str | None = None) -> list[str]:
        """The reasons of graph_breaks, recompiles or eager_frames, those matching `pattern` only."""
        events = getattr(self, measure)
        return [e for e in events if re.search(pattern, e)] if pattern else events

    def count(self, measure: str, pattern: str | None = None) -> int:
        return self.graphs if measure == "graphs" else len(self.events(measure, pattern))


@dataclass
class Result:
    rule: str
    fixture: str
    case: str
    before: Run | None = None
    after: Run | None = None
    expect: dict = field(default_factory=dict)
    outputs: str = "-"  # "equal", "equal+grads", "DIFFER"
    failures: list[str] = field(default_factory=list)
    gaps: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (target missed, the case's reasons)
    diff: str = ""
    remaining: list[str] = field(default_factory=list)  # what tcfix still reports on the fixed file

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def status(self) -> str:
        return "FAIL" if self.failures else "GAP" if self.gaps else "ok"


# ---------------------------------------------------------------------------------------------------
# Finding fixtures, applying tcfix, importing.


def find_fixtures(dirs: list[Path]) -> list[Path]:
    """Fixtures are the .py files that define oracle_cases() at module level (found without importing,
    so the snapshot-only fixtures next to them — invalid syntax, odd encodings — are simply skipped)."""
    found = []
    for folder in dirs:
        for path in sorted(folder.glob("*.py")):
            try:
                tree = ast.parse(path.read_bytes(), filename=str(path))
            except (SyntaxError, ValueError):
                continue
            if any(isinstance(n, ast.FunctionDef) and n.name == "oracle_cases" for n in tree.body):
                found.append(path)
    return found


def apply_tcfix(tcfix: Path, fixture: Path, workdir: Path, unsafe: bool, whole_model: bool) -> Path:
    """Runs tcfix --apply on a copy; returns the fixed copy. Raises with tcfix's own words on error,
    and when tcfix changed nothing in a single-rule fixture (its fix is what the fixture is for; a
    whole model may have nothing a fix level reaches)."""
    workdir.mkdir(parents=True)
    fixed = workdir / fixture.name
    shutil.copyfile(fixture, fixed)
    cmd = [str(tcfix), "--apply", "--allow-no-vcs", *(["--unsafe-fixes"] if unsafe else []), str(fixed)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    # 0: nothing left to report, 1: findings remain (both fine); anything else is a tcfix error.
    if proc.returncode not in (0, 1):
        raise RuntimeError(
            f"`{' '.join(cmd)}` exited {proc.returncode}\n--- stderr ---\n{proc.stderr}"
            f"--- stdout ---\n{proc.stdout}"
        )
    if fixed.read_bytes() == fixture.read_bytes() and not whole_model:
        raise RuntimeError(f"tcfix changed nothing (`{' '.join(cmd)}` exited {proc.returncode})\n"
                           f"--- stdout ---\n{proc.stdout}--- stderr ---\n{proc.stderr}")
    return fixed


def import_fresh(path: Path, side: str):
    """Imports a file under a unique module name, so the original and the fixed file never share code
    objects (Dynamo caches per code object) nor a sys.modules entry.

    A module may set Dynamo options when imported (a fix that writes
    `torch._dynamo.config.capture_scalar_outputs = True`): those hold for the whole process, so they are
    undone here and kept on the module as `DYNAMO_CONFIG`, which `run_side` applies to that module's runs
    only. Otherwise the fixed module would change the original's runs and every later fixture's."""
    name = f"tcfix_oracle_{next(_module_ids)}_{side}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses, pickling and logging.getLogger(__name__) want it there
    before = torch._dynamo.config.get_config_copy()
    try:
        spec.loader.exec_module(module)
    finally:
        after = torch._dynamo.config.get_config_copy()
        changed = {key: value for key, value in after.items() if before.get(key) != value}
        for key in changed:
            setattr(torch._dynamo.config, key, before[key])
    module.DYNAMO_CONFIG = changed
    return module


def unified_diff(a: Path, b: Path) -> str:
    return "".join(difflib.unified_diff(
        a.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True),
        b.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True),
        fromfile=f"original/{a.name}", tofile=f"fixed/{b.name}"))


def fresh_case(module, name: str) -> dict:
    """oracle_cases() is rebuilt for every run, so each side gets fresh, identically seeded inputs."""
    torch.manual_seed(0)
    for case in module.oracle_cases():
        if case["name"] == name:
            return case
    raise KeyError(f"the fixed file has no oracle case named {name!r}")


# ---------------------------------------------------------------------------------------------------
# Running one side.


class _RecompileCollector(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        guards = [m.group(1) for line in record.getMessage().splitlines() if (m := GUARD_LINE.match(line))]
        self.reasons.append("; ".join(guard_expression(g) for g in guards) or record.getMessage())


def guard_expression(guard: str) -> str:
    """'0/0: G['c'].flag == False     # if c.flag: ...  # x.py:16 in hook' -> the guard without the
    source comment, so a "matching" regex cannot hit the quoted source line by accident."""
    return re.split(r"\s{2,}#", guard, maxsplit=1)[0].strip()


@contextlib.contextmanager
def recompiles_captured():
    handler = _RecompileCollector()
    logger = logging.getLogger(RECOMPILE_LOGGER)
    logger.addHandler(handler)
    try:
        yield handler.reasons
    finally:
        logger.removeHandler(handler)


def quiet_dynamo_logs() -> None:
    """Turns on the recompile log (we read it) and keeps Dynamo's own stderr chatter out of the table."""
    torch._logging.set_logs(dynamo=logging.ERROR, recompiles=True)
    # set_logs makes the artifact propagate to torch's stderr handler; our handler sits on the logger
    # itself, so stop the propagation.
    logging.getLogger(RECOMPILE_LOGGER).propagate = False


def run_side(module, case_name: str, compiled: bool) -> Run:
    torch._dynamo.reset()  # drop every cache entry of earlier runs
    counters.clear()
    case = fresh_case(module, case_name)
    torch.manual_seed(0)
    target = case["factory"]()
    run = Run()

    def counting_backend(gm: torch.fx.GraphModule, example_inputs):
        # Counted once compiled: a graph AOTAutograd gives up on is an eager frame, not a graph.
        compiled_graph = aot_eager(gm, example_inputs) if case.get("backend") == "aot_eager" else gm.forward
        run.graphs += 1
        return compiled_graph

    runnable = torch.compile(target, backend=counting_backend) if compiled else target
    grad_mode = torch.no_grad() if case.get("no_grad") else contextlib.nullcontext()
    dynamo_config = torch._dynamo.config.patch(getattr(module, "DYNAMO_CONFIG", {}))
    # Models that print would flood the table; their output is not what we measure. AOTAutograd's
    # "Error detected in IndexPutBackward0" warnings are the eager frames we count.
    with recompiles_captured() as recompiles, contextlib.redirect_stdout(io.StringIO()), grad_mode, \
            dynamo_config, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step in case["inputs"]:
            args = step(target) if callable(step) else step
            out = runnable(*args)
            if case.get("train"):
                run.grads.append(backward_grads(target, out))
            run.outputs.append(flatten(out))
            if "observe" in case:
                run.observed.append(flatten(case["observe"](target)))
    run.recompiles = list(recompiles)
    run.graph_breaks = [reason for reason, n in counters["graph_break"].items() for _ in range(n)]
    run.eager_frames = eager_frame_reasons()
    return run


def eager_frame_reasons() -> list[str]:
    """Frames Dynamo started to convert and gave up on run eagerly: a graph break in a loop (GB7000)
    lands here and NOT in counters["graph_break"], which is why we count it separately. Dynamo does not
    link the cause to the frame, so the reason is every unsupported construct it met in this run."""
    skipped = counters["frames"]["total"] - counters["frames"]["ok"]
    causes = "; ".join(dict.fromkeys(summary(r) for r in counters["unimplemented"]))
    return [causes or "unknown cause"] * skipped


def summary(reason: str) -> str:
    """Dynamo's break messages run to a dozen lines; the first line and the explanation say it all."""
    lines = [line.strip() for line in reason.strip().splitlines()] or [""]
    explanation = next((line for line in lines if line.startswith("Explanation:")), None)
    text = lines[0] + (f" ({explanation.removeprefix('Explanation: ')})" if explanation else "")
    return text if len(text) <= 300 else text[:297] + "..."


def flatten(tree) -> tuple[list, object]:
    """Leaves copied now, so later in-place updates (BatchNorm stats, a growing list) cannot alter them."""
    flat, spec = tree_flatten(tree)
    return [x.detach().clone() if isinstance(x, torch.Tensor) else copy.deepcopy(x) for x in flat], spec


def backward_grads(target, out) -> dict[str, torch.Tensor | None]:
    target.zero_grad(set_to_none=True)
    loss = sum(x.sum() for x in tree_flatten(out)[0] if isinstance(x, torch.Tensor) and x.requires_grad)
    loss.backward()
    return {n: None if p.grad is None else p.grad.clone() for n, p in target.named_parameters()}


# ---------------------------------------------------------------------------------------------------
# Checking.


CASE_KEYS = {"name", "factory", "inputs", "expect", "train", "observe", "atol", "rtol", "unsafe_fixes", "backend",
             "no_grad", "whole_model", "gaps", "baseline"}
BACKENDS = (None, "aot_eager")
TARGETS = ("graphs", "graph_breaks", "eager_frames", "recompiles", "recompiles go down", "one graph per frame")


def validate_case(case: dict) -> None:
    """A typo in a case ("expected", "inputs" missing) must fail loudly, not pass vacuously."""
    missing = {"name", "factory", "inputs", "expect"} - case.keys()
    unknown = case.keys() - CASE_KEYS
    if missing or unknown:
        raise ValueError(f"case {case.get('name')!r}: missing keys {sorted(missing)}, "
                         f"unknown keys {sorted(unknown)}; the keys are {sorted(CASE_KEYS)}")
    if not case["inputs"] or not (case["expect"] or case.get("whole_model")):
        raise ValueError(f"case {case['name']!r}: inputs and expect (or whole_model) must not be empty")
    if case.get("backend") not in BACKENDS:
        raise ValueError(f"case {case['name']!r}: backend {case['backend']!r} is not one of {BACKENDS}")
    if case.get("train") and case.get("no_grad"):
        raise ValueError(f"case {case['name']!r}: train and no_grad exclude each other")
    unknown_targets = set(case.get("gaps", {})) - set(TARGETS)
    if unknown_targets or (case.get("gaps") and not case.get("whole_model")):
        raise ValueError(f"case {case['name']!r}: gaps are for whole_model cases, named one of {TARGETS}; "
                         f"got {sorted(case.get('gaps', {}))}")
    for key, bounds in case["expect"].items():
        parse_key(key)
        if not (isinstance(bounds, tuple) and len(bounds) == 2):
            raise ValueError(f"expect[{key!r}] must be a (before, after) pair, got {bounds!r}")
        for bound in bounds:
            bound_ok(0, bound)  # raises on a malformed bound


def bound_ok(value: int, bound) -> bool:
    if bound is None:
        return True
    if isinstance(bound, int):
        return value == bound
    m = BOUND.match(bound)
    if not m:
        raise ValueError(f"bad bound {bound!r}: use an int or '==N', '>=N', '<=N', '>N', '<N'")
    op, n = m.group(1) or "==", int(m.group(2))
    return {"==": value == n, ">=": value >= n, "<=": value <= n, ">": value > n, "<": value < n}[op]


def parse_key(key: str) -> tuple[str, str | None]:
    """'recompiles matching \\['pe'\\]' -> ('recompiles', "\\['pe'\\]"); 'graphs' -> ('graphs', None)."""
    measure, _, pattern = key.partition(" matching ")
    if measure not in MEASURES or (pattern and measure == "graphs"):
        raise ValueError(f"bad expect key {key!r}: use one of {MEASURES}, "
                         "optionally followed by ' matching REGEX' (not for graphs)")
    return measure, pattern or None


def check_expectation(case: dict, before: Run, after: Run) -> list[str]:
    failures = []
    for key, (want_before, want_after) in case["expect"].items():
        measure, pattern = parse_key(key)
        for side, run, want in (("before", before, want_before), ("after", after, want_after)):
            got = run.count(measure, pattern)
            if not bound_ok(got, want):
                failures.append(f"{key} {side}: expected {want}, got {got} (events listed below)")
    return failures


def missed_targets(case: dict, before: Run, after: Run) -> dict[str, str]:
    """The issue #13 targets of a whole model that this run misses: {target: what was measured}."""
    missed = {}
    for measure in ("graphs", "graph_breaks", "eager_frames", "recompiles"):
        b, a = before.count(measure), after.count(measure)
        if a > b:
            missed[measure] = f"{measure} got worse: {b} -> {a}"
    b, a = before.count("recompiles"), after.count("recompiles")
    if b > 0 and a >= b:
        missed["recompiles go down"] = f"recompiles did not go down: {b} -> {a}"
    if case.get("unsafe_fixes"):
        breaks, eager, graphs = after.count("graph_breaks"), after.count("eager_frames"), after.graphs
        if breaks or eager or graphs != 1 + a:
            missed["one graph per frame"] = (f"not one graph per compile of the model after --unsafe-fixes: {graphs} "
                                             f"graphs for {1 + a} compiles, {breaks} graph breaks, {eager} eager frames")
    return missed


def check_targets(case: dict, before: Run, after: Run, result: Result) -> None:
    """Missed targets the case lists as gaps are shown; others fail, and so do listed gaps now met."""
    gaps = case.get("gaps", {})
    missed = missed_targets(case, before, after)
    for target, measured in missed.items():
        if target in gaps:
            reasons = gaps[target]
            result.gaps.append((measured, (reasons,) if isinstance(reasons, str) else tuple(reasons)))
        else:
            result.failures.append(f"whole-model target missed: {measured}")
    for target in gaps.keys() - missed.keys():
        result.failures.append(f"whole-model target {target!r} is now met: remove it from gaps and update expect")


def compare_outputs(case: dict, reference: Run, fixed: Run) -> list[str]:
    """The fixed, compiled side must compute what the original computes eagerly."""
    atol, rtol = case.get("atol", 1e-6), case.get("rtol", 1e-5)
    failures = []
    for what, want_steps, got_steps in (("output", reference.outputs, fixed.outputs),
                                        ("observed state", reference.observed, fixed.observed)):
        for i, ((want, want_spec), (got, got_spec)) in enumerate(zip(want_steps, got_steps, strict=True)):
            if want_spec != got_spec:
                failures.append(f"step {i} {what}: {got_spec.num_leaves} leaves shaped "
                                f"{str(got_spec)[:80]}, eager original has {want_spec.num_leaves}: "
                                f"{str(want_spec)[:80]}")
            else:
                failures += [f"step {i} {what}: {d}" for d in diff_leaves(want, got, atol, rtol)]
    for i, (want, got) in enumerate(zip(reference.grads, fixed.grads, strict=True)):
        for name in want.keys() | got.keys():
            for d in diff_leaves([want.get(name)], [got.get(name)], atol, rtol):
                failures.append(f"step {i} grad of {name}: {d}")
    return failures


def diff_leaves(want: list, got: list, atol: float, rtol: float) -> list[str]:
    if len(want) != len(got):
        return [f"{len(got)} output leaves, eager original has {len(want)}"]
    out = []
    for j, (w, g) in enumerate(zip(want, got)):
        if isinstance(w, torch.Tensor) and isinstance(g, torch.Tensor):
            if w.shape != g.shape or w.dtype != g.dtype:
                out.append(f"leaf {j}: {tuple(g.shape)} {g.dtype} vs eager {tuple(w.shape)} {w.dtype}")
            elif not torch.allclose(w, g, atol=atol, rtol=rtol, equal_nan=True):
                out.append(f"leaf {j}: max abs diff {(w - g).abs().max().item():.3g}")
        elif isinstance(w, float) and isinstance(g, float):
            if not math.isclose(w, g, rel_tol=rtol, abs_tol=atol):
                out.append(f"leaf {j}: {g!r} vs eager {w!r}")
        elif w != g:
            out.append(f"leaf {j}: {g!r} vs eager {w!r}")
    return out


# ---------------------------------------------------------------------------------------------------
# One fixture: tcfix once per fix level, then every case.


def run_fixture(fixture: Path, tcfix: Path, name_filter: str | None) -> list[Result]:
    rule = "whole-model" if fixture.parent.resolve() == WHOLE_MODELS else fixture.parent.name
    with tempfile.TemporaryDirectory(prefix="tcfix-oracle-") as tmp:
        tmp = Path(tmp)
        original = tmp / "original" / fixture.name
        original.parent.mkdir()
        shutil.copyfile(fixture, original)
        try:
            before_module = import_fresh(original, "before")
            torch.manual_seed(0)
            cases = [c for c in before_module.oracle_cases()
                     if not name_filter or name_filter in f"{rule}/{fixture.name}::{c['name']}"]
        except Exception:
            return [Result(rule, fixture.name, "<import>", failures=[traceback.format_exc()])]

        fixed_by_level: dict[bool, Fixed] = {}  # unsafe_fixes -> the fixed file
        runs = SharedRuns(original.read_bytes())
        results = []
        for case in cases:
            result = Result(rule, fixture.name, case["name"])
            results.append(result)
            try:
                validate_case(case)
            except ValueError as e:
                result.failures.append(str(e))
                continue
            result.expect = case["expect"]
            unsafe = bool(case.get("unsafe_fixes"))
            if unsafe not in fixed_by_level:
                workdir = tmp / f"fixed-{int(unsafe)}"
                fixed_by_level[unsafe] = fix_and_import(tcfix, fixture, workdir, unsafe, rule == "whole-model")
            fixed = fixed_by_level[unsafe]
            result.diff, result.remaining = fixed.diff, fixed.remaining
            if fixed.error:
                result.failures.append(fixed.error)
                continue
            try:
                run_case(result, case, before_module, fixed, runs)
            except Exception:
                result.failures.append(traceback.format_exc())
        return results


@dataclass
class Fixed:
    """The fixture after tcfix at one fix level."""
    module: object = None
    error: str = ""  # why there is no module to run
    text: bytes = b""
    diff: str = ""
    remaining: list[str] = field(default_factory=list)  # what tcfix still reports, on a whole model


def fix_and_import(tcfix: Path, fixture: Path, workdir: Path, unsafe: bool, whole_model: bool) -> Fixed:
    try:
        path = apply_tcfix(tcfix, fixture, workdir, unsafe, whole_model)
    except Exception as e:
        return Fixed(error=str(e))
    fixed = Fixed(text=path.read_bytes(), diff=unified_diff(fixture, path) or "(tcfix changed nothing)")
    fixed.remaining = remaining_findings(tcfix, path, unsafe) if whole_model else []
    try:
        fixed.module = import_fresh(path, "after")
    except Exception:
        fixed.error = f"the fixed file does not import:\n{traceback.format_exc()}"
    return fixed


class SharedRuns:
    """Runs that cases of one fixture with the same `baseline` share: the original's (compiled and
    eager), and a fixed file's when two fix levels wrote the same text (or left the original's)."""

    def __init__(self, original: bytes):
        self.original = original
        self.compiled: dict[tuple[str, bytes], Run] = {}
        self.eager: dict[str, Run] = {}

    def compiled_run(self, module, text: bytes, case: dict) -> Run:
        key = (case.get("baseline"), text)
        if key[0] is None:
            return run_side(module, case["name"], compiled=True)
        if key not in self.compiled:
            self.compiled[key] = run_side(module, case["name"], compiled=True)
        return self.compiled[key]

    def eager_run(self, module, case: dict) -> Run:
        baseline = case.get("baseline")
        if baseline is None:
            return run_side(module, case["name"], compiled=False)
        if baseline not in self.eager:
            self.eager[baseline] = run_side(module, case["name"], compiled=False)
        return self.eager[baseline]


def remaining_findings(tcfix: Path, fixed: Path, unsafe: bool) -> list[str]:
    """One line per finding tcfix still reports on the fixed file, with its fix or why it has none."""
    cmd = [str(tcfix), "--output-format", "json", "--exit-zero", *(["--unsafe-fixes"] if unsafe else []), str(fixed)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lines = []
    for finding in json.loads(proc.stdout or "[]"):
        fix = finding.get("fix")
        fix_text = (f"{fix['applicability']} fix: {fix['title']}" if fix
                    else f"no fix: {finding.get('no_fix_reason')}")
        lines.append(f"line {finding['location']['row']} {finding['code']}: {fix_text}")
    return lines


def run_case(result: Result, case: dict, before_module, fixed: Fixed, runs: SharedRuns) -> None:
    result.before = runs.compiled_run(before_module, runs.original, case)
    # A fixed text equal to the original's is run as the original (same counts, by construction).
    fixed_module = before_module if fixed.text == runs.original else fixed.module
    result.after = runs.compiled_run(fixed_module, fixed.text, case)
    reference = runs.eager_run(before_module, case)
    result.failures += check_expectation(case, result.before, result.after)
    if case.get("whole_model"):
        check_targets(case, result.before, result.after, result)
    output_failures = compare_outputs(case, reference, result.after)
    result.failures += output_failures
    grads = "+grads" if case.get("train") else ""
    result.outputs = "DIFFER" if output_failures else f"equal{grads}"


# ---------------------------------------------------------------------------------------------------
# Report.


def cell(result: Result, measure: str) -> str:
    if result.before is None or result.after is None:
        return "-"
    b, a = result.before, result.after
    text = f"{b.count(measure)} → {a.count(measure)}"
    for key in result.expect:  # the filtered counts the expectation is about, after the totals
        m, pattern = parse_key(key)
        if m == measure and pattern:
            text += f" (/{pattern}/: {b.count(measure, pattern)} → {a.count(measure, pattern)})"
    return text


def print_report(results: list[Result], verbose: bool) -> None:
    header = ["rule", "fixture", "case", "breaks", "recompiles", "graphs", "eager frames", "outputs",
              "result"]
    rows = [[r.rule, r.fixture, r.case, cell(r, "graph_breaks"), cell(r, "recompiles"),
             cell(r, "graphs"), cell(r, "eager_frames"), r.outputs, r.status]
            for r in results]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())

    for r in results:
        if r.status == "ok" and not verbose:
            continue
        print(f"\n== {r.rule}/{r.fixture}::{r.case}: {r.status}")
        for failure in r.failures:
            print("  " + failure.rstrip().replace("\n", "\n  "))
        # Several targets often miss for one reason: each reason is printed once, numbered.
        reasons = list(dict.fromkeys(reason for _, why in r.gaps for reason in why))
        for measured, why in r.gaps:
            print(f"  GAP: {measured} [{', '.join(str(reasons.index(reason) + 1) for reason in why)}]")
        for number, reason in enumerate(reasons, 1):
            print(f"    [{number}] {reason}")
        for finding in r.remaining:
            print(f"  tcfix still reports: {finding}")
        for side, run in (("before", r.before), ("after", r.after)):
            if run is None:
                continue
            for measure in ("graph_breaks", "recompiles", "eager_frames"):
                shown = [summary(reason) for reason in run.events(measure)]
                for reason in dict.fromkeys(shown):
                    print(f"  {side} {measure} x{shown.count(reason)}: {reason}")
        if r.diff and (verbose or not r.passed):
            print("  tcfix diff:\n    " + r.diff.rstrip().replace("\n", "\n    "))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tcfix", required=True, type=Path, help="path to the tcfix binary")
    parser.add_argument("--filter", help="run only cases whose 'rule/fixture.py::case' contains this")
    parser.add_argument("-v", "--verbose", action="store_true", help="reasons and diffs for every case")
    parser.add_argument("dirs", nargs="*", type=Path, help="fixture folders (default: codemods/*/)")
    args = parser.parse_args(argv)

    tcfix = args.tcfix.resolve()
    if not tcfix.is_file():
        parser.error(f"no tcfix binary at {tcfix}")
    dirs = args.dirs or [*sorted(p for p in (REPO / "codemods").iterdir() if p.is_dir()), WHOLE_MODELS]
    quiet_dynamo_logs()

    results = []
    for fixture in find_fixtures(dirs):
        results += run_fixture(fixture, tcfix, args.filter)  # tcfix runs only if a case is selected

    print_report(results, args.verbose)
    failed = sum(not r.passed for r in results)
    gaps = sum(r.status == "GAP" for r in results)
    if not results:
        print("\nno oracle case ran (no fixture defines oracle_cases(), or --filter matched none)")
    print(f"\n{len(results) - failed - gaps} passed, {gaps} passed with known gaps to the whole-model targets, "
          f"{failed} failed")
    return 0 if results and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
