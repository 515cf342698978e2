#!/usr/bin/env bash
# The corpus tier: every fix tcfix has (unsafe ones too) applied to a large pinned body of real
# PyTorch code, the transformers and timm wheels from PyPI, and checked:
#   1. tcfix reports no error on any file (exit code below 2);
#   2. every file it changed parses: with CPython's ast.parse here, and with ruff's parser in the
#      Rust checker (tests/corpus/main.rs);
#   3. a second `--apply --unsafe-fixes` changes no byte of any file (sha256 of every file);
#   4. every byte outside the edits the rules proposed is unchanged: the Rust checker fixes each
#      file again through the library, with the same project index, recording every pass, and
#      checks that each pass changed the text only through that pass's proposed edits
#      (tests/corpus/containment.rs says what that check can and cannot see), and that its result
#      is byte for byte the file the CLI wrote.
#   5. the findings on the published layout are the list kept in snapshots/corpus-findings.txt
#      (tests/corpus/findings.py): any change in what tcfix says about real code shows up in
#      review; TCFIX_UPDATE_CORPUS_FINDINGS=1 rewrites the list after a change meant to alter it;
#   6. every finding in the precision ledger's sample files is labelled (snapshots/corpus-ledger.txt,
#      tests/corpus/ledger.py), which prints precision per rule.
# It also prints how many findings of each rule carry a Safe fix, an Unsafe one, a DisplayOnly
# suggestion or none (tests/corpus/coverage.py: the coverage table in docs/measurements.md).
# The same checks run on three layouts of the same code: as published; with CRLF and CR-only line
# endings (alternating by file); and indented with tabs (every leading group of four spaces, in
# the files where CPython still accepts that).
# Prints the figures and exits non-zero on any violation.
#
# Needs python3 with pip, and network to PyPI the first time: the wheels are downloaded with
# their hashes pinned below and cached in $TCFIX_CORPUS_CACHE (default ~/.cache/tcfix-corpus).
# The cached sources are never modified: tcfix runs on copies in a temporary directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo=$(pwd)

# name version sha256 (of the wheel, as PyPI lists it)
WHEELS=(
  "transformers 5.23.0 018e82fd07490ad5bb58414f65e31576033dc7f36bed10c574843f69b90991bf"
  "timm 1.0.31 5bd50f7d0fe6d09bf9285ac2523234a1b7e6bf075c0be3e7aed09139fcb617c7"
)
cache=${TCFIX_CORPUS_CACHE:-$HOME/.cache/tcfix-corpus}
mkdir -p "$cache/wheels" "$cache/src"

command -v python3 >/dev/null || { echo "corpus: python3 is needed (pip, ast.parse)" >&2; exit 1; }

sha256() { python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$1"; }

# 1. The wheels, downloaded once and checked against their pinned hashes, unpacked once.
for entry in "${WHEELS[@]}"; do
  read -r name version hash <<<"$entry"
  wheel="$cache/wheels/$name-$version-py3-none-any.whl"
  if [ ! -f "$wheel" ] || [ "$(sha256 "$wheel")" != "$hash" ]; then
    echo "corpus: downloading $name $version from PyPI" >&2
    requirements=$(mktemp)
    echo "$name==$version --hash=sha256:$hash" >"$requirements"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
      -r "$requirements" -d "$cache/wheels"
    rm -f "$requirements"
  fi
  [ "$(sha256 "$wheel")" = "$hash" ] || { echo "corpus: $wheel does not have the pinned hash" >&2; exit 1; }
  if [ ! -f "$cache/src/$name-$version/.unpacked" ]; then
    rm -rf "$cache/src/$name-$version"
    python3 -m zipfile -e "$wheel" "$cache/src/$name-$version"
    touch "$cache/src/$name-$version/.unpacked"
  fi
done

# 2. tcfix itself (the checker is built by `cargo test` below).
cargo build --release --locked --quiet
target_dir=${CARGO_TARGET_DIR:-$repo/target}
tcfix="$target_dir/release/tcfix"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
violations=0

# Rewrites the Python files under $1 in place: `crlf-cr` (CRLF and CR-only line endings, by
# turns) or `tabs` (leading groups of four spaces become tabs where CPython still parses it).
relayout() {
  python3 - "$1" "$2" <<'PY'
import ast, os, re, sys
root, layout = sys.argv[1], sys.argv[2]
turn = 0
for directory, _, names in sorted(os.walk(root)):
    for name in sorted(names):
        if not name.endswith((".py", ".pyi")):
            continue
        path = os.path.join(directory, name)
        text = open(path, "rb").read()
        if layout == "crlf-cr":
            text = text.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n" if turn % 2 == 0 else b"\r")
            turn += 1
        else:
            tabbed = re.sub(rb"(?m)^((?:    )+)", lambda m: b"\t" * (len(m.group(1)) // 4), text)
            try:
                ast.parse(tabbed)
            except SyntaxError:
                continue
            text = tabbed
        open(path, "wb").write(text)
PY
}

sha_all() { (cd "$1" && find . -type f -not -path './.tcfix_cache/*' -print0 | sort -z | xargs -0 python3 -c '
import hashlib, sys
for p in sys.argv[1:]:
    print(hashlib.sha256(open(p, "rb").read()).hexdigest(), p)'); }

# The findings on a tree, against the list kept in snapshots/ (or rewriting it when asked).
compare_findings() {
  local kept="$repo/snapshots/corpus-findings.txt" now="$work/findings.txt"
  (cd "$1" && "$tcfix" --isolated --no-cache --unsafe-fixes --exit-zero --output-format json .) >"$work/findings.json"
  # The cache changes nothing: a run that fills it and a warm one print the same bytes.
  local run
  for run in cold warm; do
    (cd "$1" && "$tcfix" --isolated --unsafe-fixes --exit-zero --output-format json .) >"$work/findings-$run.json"
    cmp -s "$work/findings.json" "$work/findings-$run.json" ||
      { echo "corpus: VIOLATION: the findings with the cache ($run) differ from those without" >&2; return 1; }
  done
  rm -rf "$1/.tcfix_cache"
  python3 "$repo/tests/corpus/findings.py" <"$work/findings.json" >"$now"
  echo "corpus: fix coverage per rule (tests/corpus/coverage.py, the table in docs/measurements.md):"
  python3 "$repo/tests/corpus/coverage.py" <"$work/findings.json"
  if [ "${TCFIX_UPDATE_CORPUS_FINDINGS:-}" = 1 ]; then
    cp "$now" "$kept"
    echo "corpus: rewrote snapshots/corpus-findings.txt ($(wc -l <"$now" | tr -d ' ') findings)"
  elif ! diff -u "$kept" "$now" >"$work/findings.diff"; then
    echo "corpus: VIOLATION: the findings differ from snapshots/corpus-findings.txt (review, then rerun with TCFIX_UPDATE_CORPUS_FINDINGS=1):" >&2
    head -60 "$work/findings.diff" >&2
    return 1
  else
    echo "corpus: findings identical to snapshots/corpus-findings.txt ($(wc -l <"$now" | tr -d ' '))"
  fi
  local lines
  lines=$(find "$1" -name '*.py' -print0 | xargs -0 cat | wc -l | tr -d ' ')
  python3 "$repo/tests/corpus/ledger.py" check "$repo/snapshots/corpus-ledger.txt" "$now" --lines "$lines" ||
    { echo "corpus: VIOLATION: the precision ledger does not match the findings" >&2; return 1; }
}

# All the checks on one layout of the corpus.
check_layout() {
  local layout=$1 dir="$work/$1" failed=0
  mkdir -p "$dir/original"
  for entry in "${WHEELS[@]}"; do
    read -r name version _ <<<"$entry"
    cp -R "$cache/src/$name-$version/$name" "$dir/original/$name"
  done
  [ "$layout" = "published" ] || relayout "$dir/original" "$layout"
  cp -R "$dir/original" "$dir/fixed"
  local files
  files=$(find "$dir/original" -name '*.py' -o -name '*.pyi' | wc -l | tr -d ' ')

  if [ "$layout" = "published" ]; then
    compare_findings "$dir/original" || failed=$((failed + 1))
  fi

  # What there is to fix, then fix everything.
  (cd "$dir/original" && "$tcfix" --statistics --unsafe-fixes --isolated --exit-zero . >"$dir/statistics.out" 2>&1) || true
  local first=0
  (cd "$dir/fixed" && "$tcfix" --apply --allow-no-vcs --unsafe-fixes --isolated --exit-zero . >"$dir/first.out" 2>"$dir/first.err") || first=$?
  if [ "$first" -ge 2 ]; then
    echo "corpus[$layout]: VIOLATION: the first --apply exited $first:" >&2
    head -20 "$dir/first.err" >&2
    failed=$((failed + 1))
  fi
  local summary='^Fixed \([0-9]*\) hazards\{0,1\} in \([0-9]*\) files\{0,1\}\.$'
  local fixes fixed_files remaining
  fixes=$(sed -n "s/$summary/\1/p" "$dir/first.err")
  fixed_files=$(sed -n "s/$summary/\2/p" "$dir/first.err")
  remaining=$(cd "$dir/fixed" && "$tcfix" --isolated --unsafe-fixes . | tail -1 || true)

  # CPython parses every file tcfix changed (each parsed before, or it would not be fixed).
  local cpython_failures
  cpython_failures=$(python3 - "$dir/original" "$dir/fixed" "$layout" <<'PY'
import ast, os, sys
original, fixed, layout = sys.argv[1:4]
failures = 0
for root, _, names in os.walk(fixed):
    for name in names:
        if not name.endswith((".py", ".pyi")):
            continue
        path = os.path.join(root, name)
        text = open(path, "rb").read()
        if text == open(os.path.join(original, os.path.relpath(path, fixed)), "rb").read():
            continue
        try:
            ast.parse(text, path)
        except (SyntaxError, ValueError) as err:
            failures += 1
            print(f"corpus[{layout}]: VIOLATION: CPython rejects the fixed {os.path.relpath(path, fixed)}: {err}", file=sys.stderr)
print(failures)
PY
)
  failed=$((failed + cpython_failures))

  # A second pass changes nothing.
  sha_all "$dir/fixed" >"$dir/before-second.sha"
  local second=0 second_diffs
  (cd "$dir/fixed" && "$tcfix" --apply --allow-no-vcs --unsafe-fixes --isolated --quiet --exit-zero . >/dev/null 2>"$dir/second.err") || second=$?
  sha_all "$dir/fixed" >"$dir/after-second.sha"
  second_diffs=$(diff "$dir/before-second.sha" "$dir/after-second.sha" | grep -c '^>' || true)
  if [ "$second" -ge 2 ] || [ "$second_diffs" -ne 0 ]; then
    echo "corpus[$layout]: VIOLATION: the second --apply exited $second and changed $second_diffs files:" >&2
    diff "$dir/before-second.sha" "$dir/after-second.sha" | grep '^>' | head -20 >&2 || true
    head -20 "$dir/second.err" >&2
    failed=$((failed + 1))
  fi

  # Bytes outside the proposed edits, ruff's parser, agreement with the CLI: the Rust checker.
  local checker=0
  TCFIX_CORPUS_ORIGINAL="$dir/original" TCFIX_CORPUS_FIXED="$dir/fixed" \
    cargo test --release --locked --quiet --test corpus -- --ignored --nocapture >"$dir/checker.out" 2>&1 || checker=$?
  grep -E '^corpus|panicked' "$dir/checker.out" | sed "s/^corpus:/corpus[$layout]:/" || true
  if [ "$checker" -ne 0 ]; then
    grep -q '^corpus' "$dir/checker.out" || tail -20 "$dir/checker.out" >&2
    failed=$((failed + 1))
  fi

  echo "corpus[$layout]: $files files processed; ${fixes:-0} fixes applied in ${fixed_files:-0} files"
  sed "s/^/corpus[$layout]: before: /" "$dir/statistics.out"
  echo "corpus[$layout]: after the fixes: $remaining"
  echo "corpus[$layout]: fixed files CPython rejects: $cpython_failures (must be 0)"
  echo "corpus[$layout]: files changed by a second --apply: $second_diffs (must be 0)"
  violations=$((violations + failed))
  rm -rf "$dir"
}

echo "corpus: transformers 5.23.0 + timm 1.0.31"
for layout in published crlf-cr tabs; do
  check_layout "$layout"
done
if [ "$violations" -ne 0 ]; then
  echo "corpus: FAILED with $violations violation(s)" >&2
  exit 1
fi
echo "corpus: OK"
