#!/usr/bin/env python3
"""Fix coverage per rule, as a Markdown table for docs/measurements.md: how many findings carry a Safe fix,
an Unsafe one, a DisplayOnly suggestion, or none, read from tcfix's JSON report (which carries every
fix whatever the flags). Issue #13's target is that at least 60% of the corpus tier's findings carry
a fix, Safe or Unsafe.

Usage (the corpus tier's published layout, as tests/corpus/run.sh unpacks it):

    cd <corpus> && tcfix --isolated --exit-zero --output-format json . | python3 tests/corpus/coverage.py

With two reports (`coverage.py BEFORE.json AFTER.json`) each cell reads "before → after".
"""
import collections
import json
import sys

KINDS = ("safe", "unsafe", "display-only", None)  # None: no fix


def tally(findings: list[dict]) -> dict[str, collections.Counter]:
    """{"CODE name": Counter of fix kinds}: per rule, how many findings carry each kind."""
    rules: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for finding in findings:
        fix = finding.get("fix")
        rules[f"{finding['code']} {finding['name']}"][fix["applicability"] if fix else None] += 1
    return rules


def percent(part: int, whole: int) -> str:
    """Rounded down: 59.7% must not read as the 60% target."""
    return f"{100 * part // whole}%" if whole else "-"


def row(counts: collections.Counter) -> list[str]:
    total = sum(counts.values())
    fixed = counts["safe"] + counts["unsafe"]
    return [str(total), *(str(counts[kind]) for kind in KINDS), f"{percent(fixed, total)} ({fixed})"]


def table(reports: list[list[dict]]) -> str:
    tallies = [tally(report) for report in reports]
    codes = sorted(set().union(*tallies))  # "CODE name" sorts by code
    header = ["rule", "findings", "safe fix", "unsafe fix", "display-only", "no fix", "with a fix (safe or unsafe)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    everything = [collections.Counter() for _ in tallies]
    for code in codes:
        cells = [row(t.get(code, collections.Counter())) for t in tallies]
        for total, t in zip(everything, tallies):
            total.update(t.get(code, collections.Counter()))
        lines.append("| " + " | ".join([code, *join_cells(cells)]) + " |")
    cells = [row(total) for total in everything]
    lines.append("| " + " | ".join(["**all**", *(f"**{c}**" for c in join_cells(cells))]) + " |")
    return "\n".join(lines)


def join_cells(cells: list[list[str]]) -> list[str]:
    """One report: its cells; two: "before → after" where they differ."""
    if len(cells) == 1:
        return cells[0]
    return [a if a == b else f"{a} → {b}" for a, b in zip(*cells)]


def main(argv: list[str]) -> int:
    if len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    reports = [json.load(open(path)) for path in argv] if argv else [json.load(sys.stdin)]
    print(table(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
