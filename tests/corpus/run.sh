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
# Prints the figures and exits non-zero on any violation.
#
# Needs python3 with pip, and network to PyPI the first time: the wheels are downloaded with
# their hashes pinned below and cached in $TCFIX_CORPUS_CACHE (default ~/.cache/tcfix-corpus).
# The cached sources are never modified: tcfix runs on a copy in a temporary directory.
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

# 2. tcfix itself, and the checker.
cargo build --release --locked --quiet
target_dir=${CARGO_TARGET_DIR:-$repo/target}
tcfix="$target_dir/release/tcfix"

# 3. A copy of the packages to fix, and a pristine copy to compare with.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/original"
for entry in "${WHEELS[@]}"; do
  read -r name version _ <<<"$entry"
  cp -R "$cache/src/$name-$version/$name" "$work/original/$name"
done
cp -R "$work/original" "$work/fixed"

files=$(find "$work/original" -name '*.py' -o -name '*.pyi' | wc -l | tr -d ' ')
violations=0

# 4. What there is to fix, then fix everything.
(cd "$work/original" && "$tcfix" --statistics --unsafe-fixes --isolated --exit-zero . >"$work/statistics.out" 2>&1) || true
set +e
(cd "$work/fixed" && "$tcfix" --apply --unsafe-fixes --isolated --exit-zero . >"$work/first.out" 2>"$work/first.err")
first=$?
set -e
if [ "$first" -ge 2 ]; then
  echo "corpus: VIOLATION: the first --apply exited $first:" >&2
  head -20 "$work/first.err" >&2
  violations=$((violations + 1))
fi
fixes=$(sed -n 's/^Fixed \([0-9]*\) hazards\{0,1\} in \([0-9]*\) files\{0,1\}\.$/\1/p' "$work/first.err")
fixed_files=$(sed -n 's/^Fixed \([0-9]*\) hazards\{0,1\} in \([0-9]*\) files\{0,1\}\.$/\2/p' "$work/first.err")
remaining=$(cd "$work/fixed" && "$tcfix" --isolated --unsafe-fixes . | tail -1 || true)

# 5. CPython parses every file tcfix changed (each parsed before, or it would not be fixed).
cpython_failures=$(python3 - "$work/original" "$work/fixed" <<'PY'
import ast, os, sys
original, fixed = sys.argv[1], sys.argv[2]
failures = 0
for root, _, names in os.walk(fixed):
    for name in names:
        if not name.endswith((".py", ".pyi")):
            continue
        path = os.path.join(root, name)
        before = os.path.join(original, os.path.relpath(path, fixed))
        text = open(path, "rb").read()
        if text == open(before, "rb").read():
            continue
        try:
            ast.parse(text, path)
        except (SyntaxError, ValueError) as err:
            failures += 1
            print(f"corpus: VIOLATION: CPython rejects the fixed {os.path.relpath(path, fixed)}: {err}", file=sys.stderr)
print(failures)
PY
)
violations=$((violations + cpython_failures))

# 6. A second pass changes nothing.
hashes() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 python3 -c '
import hashlib, sys
for p in sys.argv[1:]:
    print(hashlib.sha256(open(p, "rb").read()).hexdigest(), p)'); }
hashes "$work/fixed" >"$work/before-second.sha"
set +e
(cd "$work/fixed" && "$tcfix" --apply --unsafe-fixes --isolated --quiet --exit-zero . >/dev/null 2>"$work/second.err")
second=$?
set -e
hashes "$work/fixed" >"$work/after-second.sha"
second_diffs=$(diff "$work/before-second.sha" "$work/after-second.sha" | grep -c '^>' || true)
if [ "$second" -ge 2 ] || [ "$second_diffs" -ne 0 ]; then
  echo "corpus: VIOLATION: the second --apply exited $second and changed $second_diffs files:" >&2
  diff "$work/before-second.sha" "$work/after-second.sha" | grep '^>' | head -20 >&2 || true
  head -20 "$work/second.err" >&2
  violations=$((violations + 1))
fi

# 7. Bytes outside the proposed edits, ruff's parser, agreement with the CLI: the Rust checker.
set +e
TCFIX_CORPUS_ORIGINAL="$work/original" TCFIX_CORPUS_FIXED="$work/fixed" \
  cargo test --release --locked --quiet --test corpus -- --ignored --nocapture 2>&1 | tee "$work/checker.out" | grep -E '^corpus|VIOLATION|panicked'
checker=${PIPESTATUS[0]}
set -e
[ "$checker" -eq 0 ] || violations=$((violations + 1))

echo "corpus: transformers 5.23.0 + timm 1.0.31: $files files processed; ${fixes:-0} fixes applied in ${fixed_files:-0} files"
sed 's/^/corpus: before:   /' "$work/statistics.out"
echo "corpus: after the fixes: $remaining"
echo "corpus: fixed files CPython rejects: $cpython_failures (must be 0)"
echo "corpus: files changed by a second --apply: $second_diffs (must be 0)"
if [ "$violations" -ne 0 ]; then
  echo "corpus: FAILED with $violations violation(s)" >&2
  exit 1
fi
echo "corpus: OK"
