#!/usr/bin/env python3
"""GitHub review comments with suggested changes, for tcfix's safe fixes on a pull request's lines.

A suggestion block applies with one click only in a review comment on the lines it replaces, and
GitHub accepts such a comment only on lines of the pull request's diff. From the SARIF log of a
`tcfix --diff-base` run, each safe fix whose edits lie on at most 8 consecutive lines, all inside
one hunk of `git diff -U3 MERGE_BASE HEAD`, becomes a comment replacing those lines; a hidden
marker with the finding's fingerprint keeps later runs from posting it again. One line GitHub does
not count as part of the diff would make it refuse the whole review, so the hunks are GitHub's:
renames detected.

Usage: scripts/pr-suggestions.py SARIF MERGE_BASE HEAD_SHA POSTED_BODIES [PREFIX]
Prints the JSON body for POST /repos/{owner}/{repo}/pulls/{number}/reviews, or nothing when
there is no new suggestion. POSTED_BODIES: a file with the bodies of the review comments already
on the pull request (their markers are skipped). PREFIX: the current directory relative to the
repository's root (`git rev-parse --show-prefix`), which the SARIF's paths are relative to.
"""
import ast
import json
import posixpath
import re
import subprocess
import sys
import urllib.parse

MAX_LINES = 8
MARKER = "<!-- tcfix-suggestion {} -->"


def line_starts(text):
    """Offsets (in characters) where each line starts; lines end at `\\n`."""
    starts = [0]
    starts.extend(i + 1 for i, c in enumerate(text) if c == "\n")
    return starts


def offset(starts, text, line, column):
    """A 1-based line and character column as an offset into `text`."""
    return min(starts[line - 1] + column - 1, len(text))


def suggestion(text, replacements):
    """(first, last, new text) for the whole lines the replacements touch, or None."""
    starts = line_starts(text)
    edits = []
    for replacement in replacements:
        region = replacement["deletedRegion"]
        start = offset(starts, text, region["startLine"], region["startColumn"])
        end = offset(starts, text, region["endLine"], region["endColumn"])
        edits.append((start, end, replacement.get("insertedContent", {}).get("text", "")))
    if not edits:
        return None
    begin = text.rfind("\n", 0, min(e[0] for e in edits)) + 1
    newline = text.find("\n", max(e[1] for e in edits))
    finish = len(text) if newline < 0 else newline + 1
    first = text.count("\n", 0, begin) + 1
    last = first + text[begin:finish].rstrip("\n").count("\n")
    if last - first + 1 > MAX_LINES:
        return None
    chunk = text[begin:finish]
    for start, end, inserted in sorted(edits, reverse=True):
        chunk = chunk[: start - begin] + inserted + chunk[end - begin :]
    chunk = chunk.replace("\r\n", "\n")
    return first, last, chunk[:-1] if chunk.endswith("\n") else chunk


def hunks(merge_base):
    """The new-side line ranges of the pull request's diff (3 lines of context), by path from the
    repository's root. Renames are detected, as GitHub shows them: a renamed file's lines are in
    the diff only around its edits."""
    diff = subprocess.run(
        ["git", "diff", "--no-color", "--no-ext-diff", "--no-relative", "--src-prefix=a/", "--dst-prefix=b/",
         "-M", "-U3", merge_base, "HEAD"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        check=True,
    ).stdout
    ranges = {}
    path, in_header = None, False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            path, in_header = None, True
        elif in_header and line.startswith("+++ "):
            path = diff_path(line[4:])
        elif line.startswith("@@ "):
            in_header = False
            match = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            start, count = int(match[1]), int(match[2] or 1)
            if path is not None and count:
                ranges.setdefault(path, []).append((start, start + count - 1))
    return ranges


def diff_path(name):
    """The path of a `+++ b/models/a.py` line: git quotes a name with unusual characters (C escapes,
    octal bytes) and ends one with a space in a tab."""
    name = name.rstrip("\t")
    if name.startswith('"'):
        name = ast.literal_eval("b" + name).decode("utf-8", "replace")
    return name[2:] if name.startswith("b/") else None


def apart(comments):
    """The comments whose lines no other one's overlap, the shortest kept first. Once one of two
    overlapping suggestions is committed the other is outdated and cannot be applied, and its
    marker, already posted, would keep it from being posted again: one left out now is posted by
    the next run, on the lines as they are then."""
    kept = []
    span = lambda comment: (comment.get("start_line", comment["line"]), comment["line"])
    for comment in sorted(comments, key=lambda comment: span(comment)[1] - span(comment)[0]):
        first, last = span(comment)
        if not any(
            other["path"] == comment["path"] and span(other)[0] <= last and first <= span(other)[1] for other in kept
        ):
            kept.append(comment)
    return [comment for comment in comments if comment in kept]


def main():
    sarif_path, merge_base, head, posted_path = sys.argv[1:5]
    prefix = sys.argv[5] if len(sys.argv) > 5 else ""
    with open(posted_path, encoding="utf-8") as file:
        posted = file.read()
    with open(sarif_path, encoding="utf-8") as file:
        run = json.load(file)["runs"][0]
    changed = hunks(merge_base)
    comments = []
    for result in run["results"]:
        fingerprint = result.get("partialFingerprints", {}).get("tcfix/v1", "")
        safe = [fix for fix in result.get("fixes", []) if fix["properties"]["applicability"] == "safe"]
        if not safe or not fingerprint:
            continue
        change = safe[0]["artifactChanges"][0]
        path = urllib.parse.unquote(change["artifactLocation"]["uri"])
        in_repo = posixpath.normpath(prefix + path)  # `models/../x.py` from a subdirectory is `x.py`
        marker = MARKER.format(f"{result['ruleId']} {in_repo} {fingerprint}")
        if marker in posted:
            continue
        with open(path, encoding="utf-8", newline="") as file:
            found = suggestion(file.read(), change["replacements"])
        if found is None:
            continue
        first, last, text = found
        if not any(start <= first and last <= end for start, end in changed.get(in_repo, [])):
            continue
        fence = "`" * max(3, 1 + max((len(ticks) for ticks in re.findall(r"`+", text)), default=0))
        body = (
            f"**{result['ruleId']}** {result['message']['text']}\n\n"
            f"{safe[0]['description']['text']} (safe: `tcfix --apply` writes the same):\n\n"
            f"{fence}suggestion\n{text}\n{fence}\n{marker}"
        )
        comment = {"path": in_repo, "line": last, "side": "RIGHT", "body": body}
        if first < last:
            comment.update(start_line=first, start_side="RIGHT")
        comments.append(comment)
    comments = apart(comments)
    if comments:
        count = len(comments)
        review = {
            "commit_id": head,
            "event": "COMMENT",
            "body": f"tcfix: {count} suggested {'fix' if count == 1 else 'fixes'} for torch.compile hazards this change adds.",
            "comments": comments,
        }
        json.dump(review, sys.stdout, indent=2)
        sys.stdout.write("\n")


if __name__ == "__main__":
    main()
