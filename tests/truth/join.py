"""Judging tcfix by what Dynamo did: the truth tier's verdicts (used by run.py).

Runtime sites come from `tcfix --trace` on the package sources: a finding the run confirmed is a
site tcfix found; a TCF100/TCF200 finding (runtime-only) is a site it missed. A recompile whose only
failed guard is an input's size (`tensor 'x' size mismatch`) is automatic dynamic's one recompile
for a new size, which Dynamo does by design: it is `expected`, and counts neither way; so is a frame's
compiled forward's first recompile in a generate() run, at the first decode step
(`decode_step_recompiles`). A recompile of
the code Dynamo resumed after a graph break (`torch_dynamo_resume_in_forward_at_1445`) guards on the
values the break handed over, and a frame Dynamo compiled on its own because its caller broke at
the call (a block called from a loop that runs eagerly) guards on what tells its callers apart
(module types, strides): where tcfix finds that break, the recompile is `after-break`, and counts
neither way either (removing the break removes the resumed code and the frames apart).

A size that Dynamo had made dynamic and Python code then needed as a number (an f-string, `range`,
`math.copysign`) is made a constant again: Dynamo logs a `symbolic_shape_specialization`, and the
next new size recompiles (a run of three sizes would show it; the tier runs two). Such a `pinned`
site, at the innermost package line of the user stack, is a recompile site the run predicts: found
when a finding of a rule that speaks of it covers the line (a recompile rule; or TCF101, whose
guard keeps a message from being built), `pinned_sizes`. Sizes an operator pins (a convolution's
channels against its weight) are the model's own and are not counted.

A finding in a function the run compiled (or that a pinned size shows ran, inlined into a compiled
frame) is `confirmed` (an event or a pinned size joined it), `conditional` (not seen, but its
message states the condition it needs: "only when ..."), `shadowed` (not seen, and an earlier line
of the same function made Dynamo give the rest of the frame up to eager: the line never ran
compiled, so the run says nothing of it; not counted in precision), or `not-seen`.

A fix (variants b and c; in variant s the Dynamo option a finding says removes it, turned on where the
model is compiled) is judged in the function that holds it, on the models rerun on the fixed
copy: `removed` (no event of its kind left in that function), `left` (an event on a line with the
same code as before), `moved` (events left on other lines), `no-event` (the run saw nothing there
before), `not-run` (the fixed function did not compile again). A fix of a finding a pinned size
confirmed is judged on the pinned sizes of the rerun.
"""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import torch

RUNTIME_ONLY = {"TCF100", "TCF200"}
LEVELS = {"b": {"safe"}, "c": {"safe", "unsafe"}}
# "removed by one process-wide setting: put `torch._dynamo.config.capture_scalar_outputs = True` where ..."
SETTING = re.compile(r"process-wide setting: put `torch\._dynamo\.config\.(\w+) = True`")
MEASURES = ("graphs", "graph_breaks", "eager_frames", "recompiles")


def is_input_size_recompile(finding: dict) -> bool:
    reasons = finding.get("runtime", {}).get("reasons", [])
    return bool(reasons) and all("size mismatch" in r or "stride mismatch" in r for r in reasons)


@dataclass
class Event:
    path: str  # package-relative: timm/models/vit.py
    line: int
    kind: str  # break | recompile
    code: str  # the finding that names it, TCF100/TCF200 when none
    count: int
    reason: str = ""


@dataclass
class Finding:
    path: str
    line: int
    code: str
    severity: str
    state: str | None  # confirmed | not-seen | runtime-only | None (did not run)
    message: str
    fix: dict | None
    events: int
    raw: dict = field(default_factory=dict)


def tcfix_json(tcfix: Path, root: Path, traces: list[Path]) -> list[dict]:
    args = [str(tcfix), "--isolated", "--exit-zero", "--unsafe-fixes", "--output-format", "json"]
    for trace in traces:
        args += ["--trace", str(trace)]
    proc = subprocess.run(args + [str(root)], capture_output=True, text=True)
    if proc.returncode >= 2 or not proc.stdout.strip():
        print(f"truth: tcfix on {root} exited {proc.returncode}: {proc.stderr[-800:]}", file=sys.stderr)
        if not proc.stdout.strip():
            return []
    for line in proc.stderr.splitlines():
        if "warning" in line.lower() and "trace" in line.lower():
            print(f"truth: tcfix: {line}", file=sys.stderr)
    return json.loads(proc.stdout)


def read_findings(raw: list[dict], root: Path) -> list[Finding]:
    out = []
    for f in raw:
        rt = f.get("runtime") or {}
        for line in rt.get("caused_by_break", []):
            line["filename"] = package_path(line["filename"], root)
        out.append(Finding(package_path(f["filename"], root), f["location"]["row"], f["code"], f["severity"],
                           rt.get("state"), f["message"], f.get("fix"),
                           rt.get("graph_breaks", 0) + rt.get("recompiles", 0), f))
    return out


def package_path(filename: str, root: Path) -> str:
    """tcfix's path of a file under `root` -> package-relative: timm/models/vit.py."""
    path = Path(filename)
    return str(path.relative_to(root.parent)) if path.is_absolute() else str(Path(root.name) / path)


GUARD_SOURCE = re.compile(r"#[^#]*# (\S+\.py):(\d+) in ")


def decode_step_recompiles(models, results, dirs) -> Counter:
    """(path, line) -> how many first recompiles of a frame the generate runs logged there.

    generate() calls the compiled forward on the prompt, then on one token at a time: the first
    decode step cannot use the prefill graph (the length drops to 1, a cache is now filled), so the
    compiled forward recompiles there, whichever of its guards Dynamo names first (`len(kwargs) ==
    7`, `mems is None`). Only the compiled forward's own frame counts (frame 0, compiled by the
    prefill call), and only its first recompile (`0/0: ...` alone failed; a later `0/1: ...` is
    judged like any other): a frame first compiled at a decode step, or a second recompile, may be
    a hazard of its own."""
    found = Counter()
    for m in models:
        if results[m].get("status") != "ran" or "generate" not in results[m].get("phases", {}):
            continue
        for log in sorted((dirs[m] / "trace").glob("*.log")):
            for payload in recompile_payloads(log):
                try:
                    failures = json.loads(payload)
                except ValueError:
                    failures = [payload]
                first_decode = bool(failures) and all(f.startswith("0/0:") for f in failures)
                if first_decode and (where := GUARD_SOURCE.search(failures[0])):
                    found[(where.group(1), int(where.group(2)))] += 1
    return found


# Dynamo's guards that turn a symbolic size into a Python number: called when Python code needs
# its value, not when an operator relates it to another shape.
PYTHON_VALUE = {"guard_int", "guard_scalar", "guard_float"}


def pinned_sizes(models, results, dirs, roots) -> Counter:
    """(path, line) -> how many times the runs' traces show Dynamo making an input's size a constant
    again because package code needed its value there (see the module's doc). Paths are
    package-relative, for the package trees in `roots` (published, or a fixed copy)."""
    bases = {str(root.parent) + "/" for root in roots.values()}
    names = {root.name for root in roots.values()}
    found = Counter()
    for m in models:
        if results[m].get("status") != "ran":
            continue
        for log in sorted((dirs[m] / "trace").glob("*.log")):
            for stack in pinned_in(log):
                # The innermost frame in a package: torch's own Python code may do the pinning.
                site = next(((relative, line) for path, line in stack
                             if (relative := package_relative(path, bases, names))), None)
                if site:
                    found[site] += 1
    return found


def package_relative(path: str, bases: set[str], names: set[str]) -> str | None:
    """A traced file's path relative to the package trees (`timm/layers/patch_embed.py`), or None
    for a file of no package of the tier (torch's own). A trace made in another environment
    names its own site-packages: matched by the package's name there."""
    for base in bases:
        if path.startswith(base):
            return path[len(base):]
    if "site-packages/" in path and (relative := path.split("site-packages/", 1)[1]).split("/", 1)[0] in names:
        return relative
    return None


def pinned_in(log: Path):
    """The user stack, innermost first as (path, line), of each Python-level specialization of an
    input's size in a trace."""
    files = {}
    with open(log, errors="replace") as lines:
        for line in lines:
            if '{"str"' not in line and "symbolic_shape_specialization" not in line:
                continue
            try:
                event = json.loads(line[line.index("{"):])
            except ValueError:
                continue
            if "str" in event:
                files[event["str"][1]] = event["str"][0]
                continue
            pinned = event.get("symbolic_shape_specialization") or {}
            user = pinned.get("user_stack") or []
            python_value = any(frame.get("name") in PYTHON_VALUE for frame in pinned.get("stack") or [])
            of_input = any(".size()[" in source for source in pinned.get("sources") or [])
            if not (user and python_value and of_input):
                continue
            yield [(files.get(frame["filename"], ""), frame["line"]) for frame in reversed(user)]


def predicts_pins(finding: Finding) -> bool:
    """Whether the finding's rule speaks of a size made a constant: the recompile rules, and
    TCF101, whose guard keeps the call's arguments (an f-string message) from being built."""
    return finding.code.startswith("TCF2") or finding.code == "TCF101"


def covers(finding: Finding, line: int) -> bool:
    """Whether the finding's range spans `line` (a message on the line after its call's start)."""
    end = (finding.raw.get("end_location") or {}).get("row", finding.line)
    return finding.line <= line <= end


def recompile_payloads(log: Path):
    """The payloads of a trace's `recompile_reasons` artifacts (their tab-indented lines)."""
    payload = None
    with open(log, errors="replace") as lines:
        for line in lines:
            if payload is not None and line.startswith("\t"):
                payload.append(line[1:])
                continue
            if payload is not None:
                yield "".join(payload)
                payload = None
            if '"recompile_reasons"' in line:
                payload = []
    if payload is not None:
        yield "".join(payload)


def events_of(findings: list[Finding], decode_steps: Counter | None = None) -> list[Event]:
    events = []
    for f in findings:
        rt = f.raw.get("runtime") or {}
        if f.state not in ("confirmed", "runtime-only"):
            continue
        reason = (rt.get("reasons") or [""])[0][:90]
        if rt.get("graph_breaks"):
            events.append(Event(f.path, f.line, "break", f.code, rt["graph_breaks"], reason))
        if rt.get("recompiles"):
            decode_step = (decode_steps or Counter())[(f.path, f.line)] >= rt["recompiles"]
            code = "expected" if f.code == "TCF200" and (is_input_size_recompile(f.raw) or decode_step) else f.code
            events.append(Event(f.path, f.line, "recompile", code, rt["recompiles"], reason))
    found_breaks = {(e.path, e.line) for e in events if e.kind == "break" and e.code not in RUNTIME_ONLY}
    after = defaultdict(set)  # (path, line) -> the breaks its recompiles come from
    for f in findings:
        rt = f.raw.get("runtime") or {}
        after[(f.path, f.line)] |= {(f.path, line) for line in rt.get("resumed_after") or []}
        after[(f.path, f.line)] |= {(b["filename"], b["line"]) for b in rt.get("caused_by_break") or []}
    for e in events:
        # Code Dynamo resumed after a break guards on the values the break handed it, and a frame
        # compiled apart because its caller broke at the call guards on what tells its callers
        # apart: the recompile goes with that break, and the break's finding names the cause.
        if e.kind == "recompile" and e.code == "TCF200" and after[(e.path, e.line)] & found_breaks:
            e.code = "after-break"
    return events


class Functions:
    """The innermost def around a line, per file, by qualified name (parsed once)."""

    def __init__(self, base: Path):
        self.base = base
        self.spans: dict[str, list[tuple[int, int, str]]] = {}
        self.lines: dict[str, list[str]] = {}

    def _load(self, path: str):
        if path in self.spans:
            return
        text = (self.base / path).read_text(errors="replace")
        self.lines[path] = text.splitlines()
        spans = []

        def walk(node, prefix):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = f"{prefix}{child.name}"
                    if not isinstance(child, ast.ClassDef):
                        spans.append((child.lineno, child.end_lineno or child.lineno, name))
                    walk(child, name + ".")
                else:
                    walk(child, prefix)
        try:
            walk(ast.parse(text), "")
        except SyntaxError:
            pass
        self.spans[path] = spans

    def at(self, path: str, line: int) -> str:
        self._load(path)
        inside = [s for s in self.spans[path] if s[0] <= line <= s[1]]
        return min(inside, key=lambda s: s[1] - s[0])[2] if inside else "<module>"

    def code(self, path: str, line: int) -> str:
        self._load(path)
        lines = self.lines[path]
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def fix_kind(finding: Finding) -> str:
    """A fix's kind: its rule and title with the user's names taken out (or the Dynamo option)."""
    if not finding.fix:
        return f"{finding.code} setting `{setting_of(finding)}`"
    title = finding.fix["title"].split(" (unsafe")[0].split(": ")[0]
    parts = title.split("`")
    kind = "".join(p if i % 2 == 0 else "`…`" for i, p in enumerate(parts))
    return f"{finding.code} {kind[:90]}"


def compiled_text(result_dir: Path) -> str:
    """The raw text of a model's trace: which package files its compiled frames lie in."""
    return "".join(p.read_text(errors="replace") for p in (result_dir / "trace").glob("*.log"))


def digests_equal(a, b) -> str:
    if a == b:
        return "equal"
    try:
        ta, tb = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
        if ta.shape == tb.shape and torch.allclose(ta, tb, rtol=1e-5, atol=1e-6):
            return "close"
    except (TypeError, ValueError, RuntimeError):
        pass
    return "differ"


@dataclass
class Verdict:
    models: list
    results: dict
    sites: dict = field(default_factory=dict)  # (path, line, kind) -> (status, code, models, reason)
    executed: list = field(default_factory=list)  # (Finding, verdict)
    fixes: dict = field(default_factory=dict)  # variant -> [(kind, path, line, verdict)]
    worse: dict = field(default_factory=dict)  # variant -> [(model, text)]
    outputs: dict = field(default_factory=dict)  # variant -> [(model, phase, verdict)]
    findings: list = field(default_factory=list)  # every finding on the packages, as published
    pinned: Counter = field(default_factory=Counter)  # (path, line) -> pinned sizes, as published

    def proven_kinds(self) -> set[str]:
        """The fix kinds that removed their event in at least 90% of their applications that had
        one (and in one at least), over every variant."""
        per_kind = defaultdict(Counter)
        for variant in self.fixes:
            for kind, _, _, verdict in self.fixes[variant]:
                per_kind[kind][verdict] += 1
        return {kind for kind, c in per_kind.items()
                if c["removed"] and c["removed"] >= 0.9 * (c["removed"] + c["moved"] + c["left"])}

    def coverage(self) -> tuple[int, int]:
        """Findings whose fix (or Dynamo option) is of a proven kind, of all findings; the findings
        one process-wide option removes in a package count once (#27: one setting is one fix, written
        once where the project compiles, however many findings it removes)."""
        proven = self.proven_kinds()
        findings = [f for f in self.findings if f.code not in RUNTIME_ONLY]
        settings = {(f.path.split("/")[0], setting_of(f)): f for f in findings if not f.fix and setting_of(f)}
        fixed = [f for f in findings if f.fix or not setting_of(f)]
        covered = sum(1 for f in fixed if f.fix and fix_kind(f) in proven)
        covered += sum(1 for f in settings.values() if fix_kind(f) in proven)
        return covered, len(fixed) + len(settings)

    def lines(self) -> list[str]:
        out = [f"# truth tier: {len(self.models)} models, torch {torch.__version__.split('+')[0]}; "
               "regenerate with scripts/truth --update (see tests/truth/run.py)"]
        for (package, name) in sorted(self.models):
            r = self.results["a"][(package, name)]
            phases = " ".join(
                f"{ph}={p['graphs']}g/{p['graph_breaks']}b/{p['recompiles']}r/{p['eager_frames']}e" + ("!" if p["error"] else "")
                for ph, p in sorted(r.get("phases", {}).items()))
            errors = "; ".join(f"{ph}: {p['error'][:80]}" for ph, p in sorted(r.get("phases", {}).items()) if p["error"])
            detail = (phases + (f" | {errors}" if errors else "")) if r.get("status") == "ran" else (r.get("error") or "")[:120]
            out.append(f"model {package}/{name} {r.get('status')} {detail}".rstrip())
        for (path, line, kind), (status, code, models, reason) in sorted(self.sites.items()):
            out.append(f"site {kind} {path}:{line} {status} {code} events={models}" + (f" | {reason}" if status == "missed" else ""))
        for f, verdict in sorted(self.executed, key=lambda x: (x[0].path, x[0].line, x[0].code)):
            out.append(f"finding {f.path}:{f.line} {f.code} {f.severity} {verdict}")
        for variant, fixes in sorted(self.fixes.items()):
            for kind, path, line, verdict in sorted(fixes, key=lambda x: (x[1], x[2], x[0])):
                out.append(f"fix {variant} {path}:{line} {verdict} | {kind}")
        for variant, worse in sorted(self.worse.items()):
            for model, text in sorted(worse):
                out.append(f"worse {variant} {model} {text}")
        for variant, outs in sorted(self.outputs.items()):
            for model, phase, verdict in sorted(outs):
                if verdict != "equal":
                    out.append(f"output {variant} {model} {phase} {verdict}")
        return out

    def figures(self) -> dict:
        kinds = Counter((kind, status) for (_, _, kind), (status, *_rest) in self.sites.items())
        verdicts = Counter(v for _, v in self.executed if v != "shadowed")
        ran = sum(1 for r in self.results["a"].values() if r.get("status") == "ran")
        return {"kinds": kinds, "verdicts": verdicts, "ran": ran}

    def summary(self) -> str:
        fig = self.figures()
        k, v = fig["kinds"], fig["verdicts"]
        statuses = Counter(r.get("status") for r in self.results["a"].values())
        packages = len({p for p, _ in self.models})

        def pct(a, b):
            return f"{100 * a / b:.0f}% ({a}/{b})" if b else "n/a (0/0)"
        lines = [
            f"truth: {len(self.models)} models from {packages} packages: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())),
            f"truth: recall, graph-break sites: {pct(k['break', 'found'], k['break', 'found'] + k['break', 'missed'])}",
            f"truth: recall, recompile sites: {pct(k['recompile', 'found'], k['recompile', 'found'] + k['recompile', 'missed'])}"
            f" ({k['recompile', 'expected']} expected: a new input size, or generate's first decode step;"
            f" {k['recompile', 'after-break']} in code resumed or compiled apart after a found graph break)",
            f"truth: recall, pinned sizes (a size made a constant again: the next new size recompiles):"
            f" {pct(k['pinned', 'found'], k['pinned', 'found'] + k['pinned', 'missed'])}",
            f"truth: precision in executed code: {pct(v['confirmed'] + v['conditional'], sum(v.values()))}"
            f" (confirmed {v['confirmed']}, conditional {v['conditional']}, not seen {v['not-seen']};"
            f" {sum(1 for _, x in self.executed if x == 'shadowed')} shadowed by a frame given up earlier)",
        ]
        if self.fixes:
            covered, total = self.coverage()
            lines.append(f"truth: fix coverage: {pct(covered, total)} of the findings on the packages have a fix of a kind"
                         " that removed its event in >= 90% of its applications here (the findings one"
                         " process-wide option removes in a package count once)")
        for variant in sorted(self.fixes):
            c = Counter(verdict for *_, verdict in self.fixes[variant])
            lines.append(f"truth[{variant}]: fixes in executed code: "
                         + (", ".join(f"{n} {s}" for s, n in sorted(c.items())) or "none")
                         + f"; models worse: {len(self.worse.get(variant, []))}; outputs not equal: "
                         + str(sum(1 for *_, x in self.outputs.get(variant, []) if x != 'equal')))
        return "\n".join(lines)

    def tables(self) -> str:
        out = ["# Truth tier: what Dynamo did on real models, against what tcfix says", "",
               "Written by `scripts/truth` (tests/truth/run.py; the verdict per site, finding and fix is in",
               "snapshots/truth.txt). Recall counts distinct package lines where a run logged a graph break or a",
               "recompile; precision counts findings in functions a run compiled. A recompile whose only failed",
               "guard is an input's size is automatic dynamic's one recompile for a new size: expected, not counted;",
               "so is the compiled forward's first recompile in a generate() run (the first decode step: the length drops to",
               "1 and the cache is filled, whichever guard Dynamo names first). A recompile of the code Dynamo",
               "resumed after a graph break that tcfix finds guards on the values that break hands over, and one",
               "of a frame compiled on its own because its caller broke at the call (a block called from eager",
               "code) guards on what tells its callers apart: it goes with the break (after-break), and is not",
               "counted either. A pinned size is a size Dynamo had made dynamic and then made a constant again",
               "because package code needed its value (`symbolic_shape_specialization` in the trace): the next new",
               "size recompiles there.",
               "", "```", self.summary(), "```", "",
               "## Per rule (findings in functions the runs compiled)", "",
               "| rule | confirmed | conditional | not seen | sites found |", "|---|---|---|---|---|"]
        per_rule = defaultdict(Counter)
        for f, verdict in self.executed:
            per_rule[f.code][verdict] += 1
        for (_, _, _), (status, code, *_r) in self.sites.items():
            if status == "found":
                per_rule[code]["sites"] += 1
        for code in sorted(per_rule):
            c = per_rule[code]
            out.append(f"| {code} | {c['confirmed']} | {c['conditional']} | {c['not-seen']} | {c['sites']} |")
        missed = Counter(kind for (_, _, kind), (status, *_r) in self.sites.items() if status == "missed")
        out += ["", f"Missed sites (TCF100/TCF200, no rule): {missed['break']} graph-break, {missed['recompile']} recompile,"
                f" {missed['pinned']} pinned size.", ""]
        for variant in sorted(self.fixes):
            how = {"b": "--apply", "c": "--apply --unsafe-fixes", "s": "the Dynamo options tcfix advises, turned on"}
            out += [f"## Fix kinds, variant {variant} ({how[variant]})", "",
                    "| fix kind | removed | moved | left | no event | not run |", "|---|---|---|---|---|---|"]
            per_kind = defaultdict(Counter)
            for kind, _, _, verdict in self.fixes[variant]:
                per_kind[kind][verdict] += 1
            for kind in sorted(per_kind):
                c = per_kind[kind]
                out.append(f"| {kind} | {c['removed']} | {c['moved']} | {c['left']} | {c['no-event']} | {c['not-run']} |")
            out.append("")
        return "\n".join(out) + "\n"


def findings_of(tcfix: Path, models, packages, results, dirs, roots) -> list[Finding]:
    """tcfix's findings on each package's tree, joined to the traces of the models that ran."""
    findings = []
    for package in packages:
        traces = sorted(dirs[m] / "trace" for m in models if m[0] == package
                        and results[m].get("status") == "ran" and (dirs[m] / "trace").is_dir())
        if traces:
            findings += read_findings(tcfix_json(tcfix, roots[package], traces), roots[package])
    return findings


def setting_of(finding: Finding) -> str | None:
    """The Dynamo option that removes the finding, by its no-fix reason (variant s)."""
    match = SETTING.search(finding.raw.get("no_fix_reason") or "")
    return match.group(1) if match else None


def executed_settings(findings: list[Finding]) -> dict[str, dict[str, set[str]]]:
    """package -> file -> the Dynamo options that remove findings the runs saw there."""
    settings = defaultdict(lambda: defaultdict(set))
    for f in findings:
        if f.state == "confirmed" and (name := setting_of(f)):
            settings[f.path.split("/")[0]][f.path].add(name)
    return settings


def executed_fix_files(findings: list[Finding], level: set[str], pinned: Counter) -> set[str]:
    """The files holding a fix of this level (safe; safe and unsafe) in a function the runs compiled,
    or on a line where a run pinned a size (the line ran)."""
    return {f.path for f in findings
            if f.fix and f.fix["applicability"] in level
            and (f.state in ("confirmed", "not-seen") or pins(f, pinned))}


def pins(finding: Finding, pinned: Counter) -> bool:
    """Whether a run pinned a size on a line the finding covers, and its rule speaks of that."""
    return predicts_pins(finding) and any(path == finding.path and covers(finding, line) for path, line in pinned)


def judge(models, packages, results, dirs, roots, per_variant) -> Verdict:
    verdict = Verdict(models, results, findings=per_variant["a"])
    decode_steps = decode_step_recompiles(models, results["a"], dirs["a"])
    pinned = verdict.pinned = pinned_sizes(models, results["a"], dirs["a"], roots["a"])
    judge_sites(verdict, per_variant["a"], Functions(next(iter(roots["a"].values())).parent), decode_steps, pinned)
    for variant in (v for v in results if v != "a"):
        verdict.fixes[variant] = judge_fixes(verdict, variant, models, packages, dirs, roots, per_variant[variant])
        verdict.worse[variant], verdict.outputs[variant] = judge_models(variant, models, results, dirs)
    return verdict


# Dynamo's words for giving up the rest of a frame: what follows the line runs eagerly.
GIVES_UP_FRAME = ("falling back to eager", "skipping the rest of the function", "graph break in loop")


def frame_given_up(findings: list[Finding], functions: Functions) -> dict[tuple[str, str], int]:
    """(path, function) -> the first line where a run gave the rest of that function up to eager."""
    first = {}
    for f in findings:
        reasons = " ".join((f.raw.get("runtime") or {}).get("reasons") or []).lower()
        if f.state in ("confirmed", "runtime-only") and any(words in reasons for words in GIVES_UP_FRAME):
            key = (f.path, functions.at(f.path, f.line))
            first[key] = min(first.get(key, f.line), f.line)
    return first


def judge_sites(verdict: Verdict, findings: list[Finding], functions: Functions, decode_steps: Counter,
                pinned: Counter) -> None:
    """Each runtime site, found or missed, and each finding in executed code, as published."""
    at_site = defaultdict(list)
    for event in events_of(findings, decode_steps):
        at_site[(event.path, event.line, event.kind)].append(event)
    for key, events in at_site.items():
        named = [e for e in events if e.code not in RUNTIME_ONLY | {"expected", "after-break"}]
        status = ("found" if named else "expected" if all(e.code == "expected" for e in events)
                  else "after-break" if all(e.code in ("expected", "after-break") for e in events) else "missed")
        code = named[0].code if named else events[0].code
        verdict.sites[key] = (status, code, sum(e.count for e in events), events[0].reason)
    named = [f for f in findings if f.code not in RUNTIME_ONLY and predicts_pins(f)]
    for (path, line), count in pinned.items():
        covering = [f for f in named if f.path == path and covers(f, line)]
        status = "found" if covering else "missed"
        code = covering[0].code if covering else "TCF200"
        verdict.sites[(path, line, "pinned")] = (status, code, count, functions.code(path, line)[:90])
    given_up = frame_given_up(findings, functions)
    # A function inlined into a compiled frame has no state of its own unless an event named it:
    # a size pinned in it says it ran, and each of its findings is judged.
    ran = {(path, functions.at(path, line)) for path, line in pinned}
    for f in findings:
        pinned_here = pins(f, pinned)
        executed = f.state in ("confirmed", "not-seen") or (f.path, functions.at(f.path, f.line)) in ran
        if executed and f.code not in RUNTIME_ONLY:
            shadowed = given_up.get((f.path, functions.at(f.path, f.line)), f.line) < f.line
            v = ("confirmed" if f.state == "confirmed" or pinned_here else "conditional" if " only when " in f.message
                 else "shadowed" if shadowed else "not-seen")
            verdict.executed.append((f, v))


def judge_fixes(verdict: Verdict, variant: str, models, packages, dirs, roots, findings: list[Finding]) -> list:
    """Each fix of the variant's level in executed code: removed, moved, left, no event, not run."""
    base = {p: roots["a"][p].parent for p in packages}
    before = Functions(next(iter(base.values())))
    after = Functions(roots[variant][packages[0]].parent)
    events_after = defaultdict(list)
    for event in events_of(findings):
        events_after[(event.path, after.at(event.path, event.line), event.kind)].append(event)
    # The fixed files each rerun model compiled (as published), for "did the fix run again?".
    rerun_ok = [m for m in models if dirs[variant][m] != dirs["a"][m] and verdict.results[variant][m].get("status") == "ran"]
    compiled_by_rerun = "".join(compiled_text(dirs["a"][m]) for m in rerun_ok)
    for (path, line), count in pinned_sizes(rerun_ok, verdict.results[variant], dirs[variant], roots[variant]).items():
        events_after[(path, after.at(path, line), "pinned")].append(Event(path, line, "pinned", "", count))
    fixes = []
    for f, _v in verdict.executed:
        package = f.path.split("/")[0]
        if variant == "s":
            if not setting_of(f):
                continue
        elif not f.fix or f.fix["applicability"] not in LEVELS[variant]:
            continue
        elif (base[package] / f.path).read_bytes() == (roots[variant][package].parent / f.path).read_bytes():
            continue  # the fix did not land (overlap, or dropped)
        kind = "break" if f.raw.get("runtime", {}).get("graph_breaks") else "recompile"
        pinned = f.state != "confirmed" and pins(f, verdict.pinned)
        kind = "pinned" if pinned else kind
        if f.state != "confirmed" and not pinned:
            result = "no-event"
        elif f.path not in compiled_by_rerun:
            result = "not-run"
        else:
            left = events_after.get((f.path, before.at(f.path, f.line), kind), [])
            code_before = before.code(f.path, f.line)
            if not left:
                result = "removed"
            elif any(after.code(e.path, e.line) == code_before for e in left):
                result = "left"
            else:
                result = "moved"
        fixes.append((fix_kind(f), f.path, f.line, result))
    return fixes


def judge_models(variant: str, models, results, dirs) -> tuple[list, list]:
    """The rerun models a variant made worse (more graphs, breaks, eager frames, recompiles, or an
    error), and whether their outputs and gradients equal the unfixed run's."""
    worse, outs = [], []
    for m in models:
        a, b = results["a"][m], results[variant][m]
        if a.get("status") != "ran" or dirs[variant][m] == dirs["a"][m]:
            continue
        name = f"{m[0]}/{m[1]}"
        if b.get("status") != "ran":
            worse.append((name, f"{b.get('status')}: {b.get('error')}"))
            continue
        for phase, pa in a["phases"].items():
            pb = b["phases"].get(phase, {})
            grown = [f"{k} {pa[k]}->{pb.get(k)}" for k in MEASURES if pb.get(k, 0) > pa[k]]
            if pb.get("error") and not pa.get("error"):
                grown.append(f"error {pb['error'][:80]}")
            if grown:
                worse.append((name, f"{phase}: " + ", ".join(grown)))
        oa = torch.load(dirs["a"][m] / "outputs.pt") if (dirs["a"][m] / "outputs.pt").is_file() else {}
        ob = torch.load(dirs[variant][m] / "outputs.pt") if (dirs[variant][m] / "outputs.pt").is_file() else {}
        for phase in ("eager", "eager_grads", "infer"):
            if phase in oa:
                outs.append((name, phase, digests_equal(oa[phase], ob.get(phase))))
    return worse, outs
