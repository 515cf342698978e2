#!/usr/bin/env python3
"""The truth tier: real models from pinned PyPI packages, run under torch.compile, judge tcfix.

usage: run.py --tcfix BIN [--models FILE] [--packages a,b] [--jobs N] [--timeout S] [--out DIR]
              [--variants a,b,c,s] [--snapshot FILE [--update]] [--table FILE]

1. Runs every model of the catalogue (tests/truth/packages/, or the `package/name` lines of --models)
   in its own process (run_model.py) with TORCH_TRACE, N at a time, each with a timeout. Results and
   traces are cached under --out keyed by what produced them, so a second run only redoes what
   changed, and an interrupted run resumes.
2. Joins the traces to tcfix's findings on the installed packages' sources (`tcfix --trace`): each
   runtime graph break and recompile at its package line, found or missed; each finding in a function
   that ran, confirmed, not seen, or not seen but stating its condition (join.py).
3. Fix truth: copies the packages, applies `tcfix --apply` (b) and `--apply --unsafe-fixes` (c),
   reruns the models whose compiled frames lie in a changed file, and judges each fix kind (removed,
   moved, left) and each model (worse or not; outputs and gradients equal to the unfixed run).
4. Writes the verdict lines (--snapshot: compared with the kept file, or rewritten with --update)
   and the tables (--table, markdown).

A model that fails to build or to run eagerly is recorded with its error and skipped; a crash or a
timeout of one model never stops the run; a corrupt trace is reported by tcfix and the rest is read.
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import join  # noqa: E402
from packages import PACKAGES, package_module  # noqa: E402

SITE = Path(sysconfig.get_paths()["purelib"])
CHUNK = 6  # models per worker: one import of torch and the package for so many models


def file_hash(*paths: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.read_bytes() if path.is_file() else b"-")
    return h.hexdigest()[:16]


def tree_hash(root: Path) -> str:
    """The sources of a package tree, for the cache key of a fixed copy."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def catalogue(models_file: Path | None, packages: list[str]) -> list[tuple[str, str]]:
    if models_file:
        pairs = [tuple(line.split("/", 1)) for line in models_file.read_text().splitlines()
                 if line.strip() and not line.startswith("#")]
        return [(p, n) for p, n in pairs if p in packages]
    models = []
    for package in packages:
        try:
            models.extend((package, name) for name in package_module(package).names())
        except Exception as err:  # noqa: BLE001 - a package that does not import is skipped, said
            print(f"truth: {package}: cannot list its models ({type(err).__name__}: {err}); skipped", file=sys.stderr)
    return models


def source_dir(package: str) -> str:
    """The folder in site-packages that holds the package's sources (its module may say otherwise)."""
    return getattr(package_module(package), "SOURCE", package)


def slug(package: str, name: str) -> str:
    return f"{package}__{name}".replace("/", "_").replace(" ", "_")


def cached(outdir: Path, key: str) -> dict | None:
    result_file, key_file = outdir / "result.json", outdir / "key"
    if result_file.is_file() and key_file.is_file() and key_file.read_text() == key:
        return json.loads(result_file.read_text())
    return None


# The Dynamo options tcfix advises, and the environment variables torch._dynamo.config reads them
# from at import (torch 2.15): a user may set them either way; the driver itself stays unchanged.
DYNAMO_OPTION_VARIABLES = {
    "capture_scalar_outputs": "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS",
    "capture_dynamic_output_shape_ops": "TORCHDYNAMO_CAPTURE_DYNAMIC_OUTPUT_SHAPE_OPS",
}


def run_chunk(package: str, chunk: list[tuple[str, Path]], timeout: int, pythonpath: str | None,
              settings: str = "") -> None:
    """A worker (run_model.py) for a few models of one package: it imports the package once and
    forks a child per model. A worker that dies leaves its unfinished models recorded as crashed.
    `settings`: the Dynamo options to turn on (variant s), by the variables torch reads them from."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    for name in filter(None, settings.split(",")):
        env[DYNAMO_OPTION_VARIABLES[name]] = "1"
    # The worker points the log at each model's folder; the variable only has to turn tracing on.
    env["TORCH_TRACE"] = str(chunk[0][1] / "trace")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    args = [sys.executable, str(HERE / "run_model.py"), package, str(timeout)]
    for name, outdir in chunk:
        shutil.rmtree(outdir, ignore_errors=True)
        args += [name, str(outdir)]
    try:
        proc = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              timeout=timeout * len(chunk) + 120, env=env)
        error = f"worker exited {proc.returncode}: {(proc.stderr.strip().splitlines() or [''])[-1][:200]}"
    except subprocess.TimeoutExpired:
        error = "worker timed out"
    for name, outdir in chunk:
        if not (outdir / "result.json").is_file():
            outdir.mkdir(parents=True, exist_ok=True)
            (outdir / "result.json").write_text(json.dumps(
                {"package": package, "name": name, "status": "crashed", "error": error, "phases": {}}) + "\n")


def run_models(models, out: Path, key_of, jobs: int, timeout: int, pythonpath: str | None, label: str,
               settings_of=lambda package: "") -> dict:
    """Every model's result: cached where its key matches, else run in chunks of one package."""
    results: dict[tuple[str, str], dict] = {}
    todo = []
    for model in models:
        hit = cached(out / slug(*model), key_of(model[0]))
        if hit is not None:
            results[model] = hit
        else:
            todo.append(model)
    per_package = {}
    for package in dict.fromkeys(p for p, _ in todo):  # in the order given
        names = [n for p, n in todo if p == package]
        size = max(1, min(CHUNK, -(-len(names) // jobs)))
        per_package[package] = [(package, [(n, out / slug(package, n)) for n in names[i:i + size]])
                                for i in range(0, len(names), size)]
    # Packages by turns, so that an interrupted run (resumed later) has covered every package.
    chunks = [chunk for turn in itertools.zip_longest(*per_package.values()) for chunk in turn if chunk]
    if todo:
        print(f"truth[{label}]: {len(todo)} models to run ({len(models) - len(todo)} cached), "
              f"{len(chunks)} workers' worth, {jobs} at a time", file=sys.stderr)
    done = 0

    def task(chunk):
        package, items = chunk
        run_chunk(package, items, timeout, pythonpath, settings_of(package))
        return package, items

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for package, items in pool.map(task, chunks):
            for name, outdir in items:
                result = json.loads((outdir / "result.json").read_text())
                (outdir / "key").write_text(key_of(package))
                results[(package, name)] = result
                done += 1
                if result.get("status") != "ran" or os.environ.get("TCFIX_TRUTH_VERBOSE"):
                    print(f"truth[{label}] {done}/{len(todo)} {package}/{name}: {result.get('status')}"
                          f" {result.get('error') or ''}".rstrip(), file=sys.stderr)
    return results


def apply_fixes(tcfix: Path, packages: list[str], site: Path, unsafe: bool) -> dict[str, Path]:
    """Copies of the packages' sources with tcfix's fixes applied, made again when tcfix changed;
    returns each package's copy."""
    site.mkdir(parents=True, exist_ok=True)
    made_by = file_hash(tcfix)
    roots = {}
    for package in packages:
        source = SITE / source_dir(package)
        copy = site / source_dir(package)
        marker = copy / ".tcfix-applied"
        if not (marker.is_file() and marker.read_text().split("\n", 1)[0] == made_by):
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
            args = [str(tcfix), "--apply", "--allow-no-vcs", "--isolated", "--no-cache", "--exit-zero", "--quiet", "."]
            if unsafe:
                args.insert(2, "--unsafe-fixes")
            proc = subprocess.run(args, cwd=copy, capture_output=True, text=True)
            if proc.returncode >= 2:
                print(f"truth: tcfix --apply on {package} exited {proc.returncode}: {proc.stderr[-500:]}", file=sys.stderr)
            marker.write_text(made_by + "\n" + proc.stderr)
        roots[package] = copy
    return roots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tcfix", type=Path, required=True)
    parser.add_argument("--models", type=Path, help="a file of package/name lines (default: the whole catalogue)")
    parser.add_argument("--packages", default=",".join(PACKAGES))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per model and variant")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("TCFIX_TRUTH_OUT", Path.home() / ".cache/tcfix-truth/runs")))
    parser.add_argument("--variants", default="a,b,c,s", help="a: as published, b: --apply, c: --apply --unsafe-fixes, "
                        "s: the Dynamo options tcfix advises, turned on")
    parser.add_argument("--snapshot", type=Path, help="the verdict lines kept in the repository")
    parser.add_argument("--update", action="store_true", help="rewrite --snapshot instead of comparing")
    parser.add_argument("--table", type=Path, help="write the tables (markdown) here")
    parser.add_argument("--fresh", action="store_true", help="forget the cached results and traces")
    args = parser.parse_args()
    if args.fresh:
        shutil.rmtree(args.out, ignore_errors=True)
    args.tcfix = args.tcfix.resolve()

    packages = [p for p in args.packages.split(",") if p]
    models = catalogue(args.models, packages)
    packages = sorted({p for p, _ in models})
    print(f"truth: {len(models)} models from {len(packages)} packages, {args.jobs} at a time", file=sys.stderr)
    driver_key = file_hash(HERE / "run_model.py", HERE / "packages" / "__init__.py", HERE / "requirements.txt")
    variants = args.variants.split(",")

    # (a) as published: keyed by the driver, the pins and the package's own catalogue module, so a
    # changed input or size reruns that package's models (and only those), and a fresh run (CI's)
    # agrees with a snapshot made from the cache.
    key_a = {p: driver_key + file_hash(HERE / "packages" / f"{p}.py") for p in packages}
    out_a = args.out / "a"
    results = {"a": run_models(models, out_a, key_a.get, args.jobs, args.timeout, None, "a")}
    dirs = {"a": {m: out_a / slug(*m) for m in models}}
    roots = {"a": {p: SITE / source_dir(p) for p in packages}}

    findings = {"a": join.findings_of(args.tcfix, models, packages, results["a"], dirs["a"], roots["a"])}

    pinned = join.pinned_sizes(models, results["a"], dirs["a"], roots["a"])

    # (b), (c): the fixed copies; rerun the models that compile a file holding a fix in code the
    # runs compiled (a fix elsewhere cannot change what they compile).
    for variant in (v for v in variants if v in ("b", "c")):
        site = args.out / variant / "site"
        roots[variant] = apply_fixes(args.tcfix, packages, site, unsafe=variant == "c")
        fixed = join.executed_fix_files(findings["a"], join.LEVELS[variant], pinned)
        rerun = [m for m in models if results["a"][m].get("status") == "ran"
                 and any(f in join.compiled_text(dirs["a"][m]) for f in fixed)]
        print(f"truth[{variant}]: fixes in compiled code in {len(fixed)} files; {len(rerun)} models compile them",
              file=sys.stderr)
        key_v = {p: key_a[p] + tree_hash(roots[variant][p]) for p in packages}
        out_v = args.out / variant / "runs"
        rerun_results = run_models(rerun, out_v, key_v.get, args.jobs, args.timeout, str(site), variant)
        results[variant] = {m: rerun_results.get(m, results["a"][m]) for m in models}
        dirs[variant] = {m: (out_v / slug(*m) if m in rerun_results else dirs["a"][m]) for m in models}
        # Only the rerun models' traces: the others' lines are the published files', not the fixed ones.
        findings[variant] = join.findings_of(args.tcfix, rerun, packages, results[variant], dirs[variant], roots[variant])

    # (s): the process-wide Dynamo options tcfix advises, turned on where the model is compiled:
    # rerun the models that compile a file holding a finding one of them removes.
    if "s" in variants:
        settings = join.executed_settings(findings["a"])
        rerun = [m for m in models if results["a"][m].get("status") == "ran" and settings.get(m[0])
                 and any(f in join.compiled_text(dirs["a"][m]) for f in settings[m[0]])]
        settings_of = {p: ",".join(sorted({s for names in settings.get(p, {}).values() for s in names}))
                       for p in packages}
        print(f"truth[s]: {len(rerun)} models compile a finding a Dynamo option removes", file=sys.stderr)
        key_s = {p: key_a[p] + settings_of[p] for p in packages}
        out_s = args.out / "s" / "runs"
        rerun_results = run_models(rerun, out_s, key_s.get, args.jobs, args.timeout, None, "s", settings_of.get)
        results["s"] = {m: rerun_results.get(m, results["a"][m]) for m in models}
        dirs["s"] = {m: (out_s / slug(*m) if m in rerun_results else dirs["a"][m]) for m in models}
        roots["s"] = roots["a"]
        findings["s"] = join.findings_of(args.tcfix, rerun, packages, results["s"], dirs["s"], roots["s"])

    verdict = join.judge(models, packages, results, dirs, roots, findings)
    lines = verdict.lines()
    print(verdict.summary())
    if args.table:
        args.table.write_text(verdict.tables())
    if args.snapshot:
        if args.update:
            args.snapshot.write_text("\n".join(lines) + "\n")
            print(f"truth: rewrote {args.snapshot} ({len(lines)} lines)", file=sys.stderr)
        else:
            kept = args.snapshot.read_text().splitlines() if args.snapshot.is_file() else []
            if kept != lines:
                import difflib
                diff = list(difflib.unified_diff(kept, lines, str(args.snapshot), "this run", lineterm="", n=0))
                print("truth: VIOLATION: the verdicts differ from the kept snapshot (review, then rerun with --update):",
                      file=sys.stderr)
                print("\n".join(diff[:80]), file=sys.stderr)
                return 1
            print(f"truth: verdicts identical to {args.snapshot} ({len(lines)} lines)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
