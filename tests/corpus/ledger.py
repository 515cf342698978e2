#!/usr/bin/env python3
"""The precision ledger: a labelled sample of tcfix's findings on the corpus tier.

Each line of snapshots/corpus-ledger.txt is one finding in one of the sample's files:

    path:row:col CODE SEEN VERDICT | reason read from the code

SEEN says when tcfix reported it: `BN` before issue #12 (commit fdbcec9) and now, `B-` before
only (a false alarm since removed, or a true finding lost), `-N` now only (new). VERDICT is
`true`, `false` or `unsure`. A finding whose claim changed enough to change its verdict (it now
says the condition under which it holds) has two lines: `B-` with the old verdict, `-N` with
the new. The sample's files are the paths the ledger names; they were drawn
once from the findings at fdbcec9 with a fixed seed, stratified by rule (`sample`).

`check` fails when a finding the ledger says tcfix reports is gone, or when tcfix reports a
finding in a sample file that the ledger has not labelled (or labelled `?`): every change in what
tcfix says about these files is read and labelled by a person. It then prints precision per rule.
`update` brings SEEN up to date after a change and adds the new findings with verdict `?`, for a
person to label; it says which true findings were lost.

Usage:
    ledger.py sample FINDINGS [--seed 12] [--per-rule 12]   # a ledger to label (verdict `?`)
    ledger.py update LEDGER FINDINGS                         # rewrites LEDGER
    ledger.py check LEDGER FINDINGS [--lines N]              # N: lines of Python in the corpus
"""
import argparse
import collections
import random
import sys

VERDICTS = ("true", "false", "unsure")
UNLABELLED = "?"


def finding_key(line: str) -> tuple[str, str]:
    """(path:row:col, CODE) of a line of tests/corpus/findings.py's list."""
    where, code = line.split()[:2]
    return where, code


def path_of(where: str) -> str:
    return where.rsplit(":", 2)[0]


def read_findings(path: str) -> list[tuple[str, str]]:
    with open(path, encoding="utf-8") as file:
        return [finding_key(line) for line in file if line.strip()]


def sample(findings: list[tuple[str, str]], seed: int, per_rule: int) -> list[str]:
    """Files drawn rule by rule until each rule has `per_rule` findings in the sample (or no
    more files): every finding of a drawn file is labelled, whatever its rule."""
    files_of = collections.defaultdict(set)
    for where, code in findings:
        files_of[code].add(path_of(where))
    rng = random.Random(seed)
    chosen: set[str] = set()
    for code in sorted(files_of):
        files = sorted(files_of[code])
        rng.shuffle(files)
        for path in files:
            if sum(1 for w, c in findings if c == code and path_of(w) in chosen) >= per_rule:
                break
            chosen.add(path)
    return sorted(chosen)


Entry = collections.namedtuple("Entry", "where code before now verdict reason")


def read_ledger(path: str) -> list[Entry]:
    entries = []
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            if not line.strip() or line.startswith("#"):
                continue
            head, _, reason = line.partition("|")
            try:
                where, code, seen, verdict = head.split()
            except ValueError:
                sys.exit(f"{path}:{number}: expected `path:row:col CODE SEEN VERDICT | reason`")
            if seen not in ("BN", "B-", "-N") or verdict not in (*VERDICTS, UNLABELLED):
                sys.exit(f"{path}:{number}: SEEN is BN, B- or -N; VERDICT is one of {VERDICTS}")
            entries.append(Entry(where, code, seen[0] == "B", seen[1] == "N", verdict, reason.strip()))
    return entries


def precision(entries: list[Entry]) -> str:
    true = sum(e.verdict == "true" for e in entries)
    false = sum(e.verdict == "false" for e in entries)
    unsure = len(entries) - true - false
    if true + false == 0:
        return f"{'-':>5} ({len(entries)})"
    text = f"{100 * true / (true + false):4.0f}% ({true}/{true + false}"
    return text + (f", {unsure} unsure)" if unsure else ")")


def check(ledger_path: str, findings_path: str, lines: int | None) -> int:
    entries = read_ledger(ledger_path)
    files = {path_of(e.where) for e in entries}
    reported = {key for key in read_findings(findings_path) if path_of(key[0]) in files}
    labelled_now = {(e.where, e.code) for e in entries if e.now}
    gone = sorted(labelled_now - reported)
    new = sorted(reported - {(e.where, e.code) for e in entries})
    revived = sorted(reported & {(e.where, e.code) for e in entries if not e.now} - labelled_now)
    for where, code in gone:
        print(f"ledger: {where} {code} is labelled as reported but tcfix no longer reports it")
    for where, code in revived:
        print(f"ledger: {where} {code} is labelled as no longer reported but tcfix reports it")
    for where, code in new:
        print(f"ledger: {where} {code} is reported in a sample file but has no label")
    unlabelled = [e for e in entries if e.verdict == UNLABELLED]
    for e in unlabelled:
        print(f"ledger: {e.where} {e.code} waits for a verdict")
    before = [e for e in entries if e.before]
    now = [e for e in entries if e.now]
    print(f"ledger: {len(entries)} labelled findings in {len(files)} files")
    print(f"{'rule':8} {'before #12':>26} {'now':>26}")
    for code in sorted({e.code for e in entries}):
        print(f"{code:8} {precision([e for e in before if e.code == code]):>26} "
              f"{precision([e for e in now if e.code == code]):>26}")
    print(f"{'all':8} {precision(before):>26} {precision(now):>26}")
    if lines:
        everything = read_findings(findings_path)
        print(f"findings per 1,000 lines on the corpus: {1000 * len(everything) / lines:.2f} "
              f"({len(everything)} in {lines} lines)")
    if gone or new or revived or unlabelled:
        print("ledger: label the change in snapshots/corpus-ledger.txt (tests/corpus/ledger.py says how)")
        return 1
    return 0


def update(ledger_path: str, findings_path: str) -> int:
    with open(ledger_path, encoding="utf-8") as file:
        header = [line for line in file if line.startswith("#")]
    entries = read_ledger(ledger_path)
    files = {path_of(e.where) for e in entries}
    reported = {key for key in read_findings(findings_path) if path_of(key[0]) in files}
    lines = []
    keys = collections.Counter((e.where, e.code) for e in entries)
    for e in entries:
        # Of a finding relabelled after its claim changed, the old line stays as it was.
        reworded = keys[(e.where, e.code)] > 1 and not e.now
        now = (e.where, e.code) in reported and not reworded
        if e.now and not now and e.verdict == "true":
            print(f"ledger: a true finding is lost: {e.where} {e.code} | {e.reason}")
        seen = ("B" if e.before else "-") + ("N" if now else "-")
        if seen == "--":  # new since the sample, and gone again: nothing to keep
            continue
        lines.append(f"{e.where} {e.code} {seen} {e.verdict} | {e.reason}".rstrip())
    known = {(e.where, e.code) for e in entries}
    for where, code in sorted(reported - known):
        lines.append(f"{where} {code} -N {UNLABELLED} |")
    with open(ledger_path, "w", encoding="utf-8") as file:
        file.writelines(header)
        file.writelines(line + "\n" for line in sorted(lines, key=ledger_order))
    print(f"ledger: {len(reported - known)} new findings to label")
    return 0


def ledger_order(line: str) -> tuple:
    where, code = line.split()[:2]
    path, row, column = where.rsplit(":", 2)
    return path, int(row), int(column), code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    draw = commands.add_parser("sample")
    draw.add_argument("findings")
    draw.add_argument("--seed", type=int, default=12)
    draw.add_argument("--per-rule", type=int, default=12)
    verify = commands.add_parser("check")
    verify.add_argument("ledger")
    verify.add_argument("findings")
    verify.add_argument("--lines", type=int)
    refresh = commands.add_parser("update")
    refresh.add_argument("ledger")
    refresh.add_argument("findings")
    args = parser.parse_args()
    if args.command == "update":
        return update(args.ledger, args.findings)
    if args.command == "sample":
        findings = read_findings(args.findings)
        files = set(sample(findings, args.seed, args.per_rule))
        for where, code in findings:
            if path_of(where) in files:
                print(f"{where} {code} BN ? |")
        return 0
    return check(args.ledger, args.findings, args.lines)


if __name__ == "__main__":
    sys.exit(main())
