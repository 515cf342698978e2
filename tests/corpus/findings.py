#!/usr/bin/env python3
"""The corpus findings as a reviewable list: one line per finding, read from tcfix's JSON report.

    path:row:col CODE severity | message | fix: safety "title" #edits-hash
    path:row:col CODE severity | message | no fix: reason

The list is kept in snapshots/corpus-findings.txt so that a change that moves, adds, drops or
rewords a finding on real code (transformers + timm) shows up in review, as ruff's ecosystem
check does. The hash stands for the fix's edits (their text would make the list unreadable).

Usage: tcfix --output-format json ... | findings.py > list
"""
import hashlib
import json
import sys


def line(finding: dict) -> str:
    where = f"{finding['filename']}:{finding['location']['row']}:{finding['location']['column']}"
    message = finding["message"].replace("\\", "\\\\").replace("\n", "\\n")  # one finding, one line
    head = f"{where} {finding['code']} {finding['severity']} | {message}"
    fix = finding.get("fix")
    if fix is None:
        return f"{head} | no fix: {finding.get('no_fix_reason')}"
    edits = json.dumps(fix["edits"], sort_keys=True).encode()
    digest = hashlib.sha256(edits).hexdigest()[:10]
    return f"{head} | fix: {fix['applicability']} \"{fix['title']}\" #{digest}"


def main() -> int:
    findings = json.load(sys.stdin)
    for text in sorted(line(finding) for finding in findings):
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
