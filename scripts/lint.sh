#!/usr/bin/env bash
# The style gate (STYLE.md: clang-format and clang-tidy configured in the repo and run by the
# test command): usage: scripts/lint.sh [BUILD_DIR]   (default: build)
#  (a) clang-format --dry-run --Werror over every C++/CUDA source under harness/, kernels/,
#      families/ and tests/ (.clang-format);
#  (b) clang-tidy (.clang-tidy) over the host-side translation units of harness/ and families/
#      (*.cpp only: no .cu files, no tests, nothing generated into the build directory), with the
#      flags from BUILD_DIR/compile_commands.json, two files at a time; the clang-tidy is the
#      venv's, the version scripts/requirements-test.txt pins, because a check's findings change from
#      one clang-tidy release to the next.
#  (c) pyflakes over the Python of scripts/ and tests/python (names undefined or unused, imports
#      shadowed, f-strings without fields), with the venv's Python (GPUBENCH_VENV, else .venv:
#      scripts/requirements-test.txt installs it).
# Exits 1 on any finding, 2 on a usage or setup error; the last line is a one-line summary.
# Run time: clang-tidy over harness/ and families/ (77 files) took 58 s on 2 busy cores with
# clang-tidy 23 (2 min 52 s with Debian's clang-tidy 14, which also analysed every system
# header), so nothing is narrowed; if it grows past ~2 minutes, trim the checks or the file list.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { printf 'lint: %s\n' "$*" >&2; exit 2; }

[[ $# -le 1 ]] || die "usage: scripts/lint.sh [BUILD_DIR]"
build="${1:-build}"
[[ "$build" = /* ]] || build="$root/$build"
[[ -f "$build/compile_commands.json" ]] ||
  die "no $build/compile_commands.json (configure that build first; CMAKE_EXPORT_COMPILE_COMMANDS is ON)"

pick() {  # the first of the given tools on PATH (the -14 names first: the format was made with 14)
  local t
  for t in "$@"; do
    if command -v "$t" >/dev/null; then command -v "$t"; return; fi
  done
  die "none of $* found (apt-get install clang-format)"
}
clang_format="$(pick clang-format-14 clang-format)"
venv="${GPUBENCH_VENV:-$root/.venv}"
clang_tidy="$venv/bin/clang-tidy"
[[ -x "$clang_tidy" ]] ||
  die "no clang-tidy in $venv (scripts/test.sh installs scripts/requirements-test.txt there, which pins its version)"
command -v python3 >/dev/null || die "python3 is required to read compile_commands.json"

cd "$root"
start=$SECONDS
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# (a) Formatting. Tracked files when this is a git checkout (nothing generated or local).
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -- 'harness/*' 'kernels/*' 'families/*' 'tests/*' | grep -E '\.(h|cpp|cu|cuh)$' >"$tmp/format.txt" || true
else
  find harness kernels families tests -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) |
    sort >"$tmp/format.txt"
fi
format_files=$(wc -l <"$tmp/format.txt")
format_bad=0
if [[ $format_files -gt 0 ]]; then
  if ! xargs -d '\n' "$clang_format" --dry-run --Werror <"$tmp/format.txt" >"$tmp/format.log" 2>&1; then
    format_bad=$({ grep -E '^[^ ]+:[0-9]+:[0-9]+: error:' "$tmp/format.log" || true; } | cut -d: -f1 | sort -u | wc -l)
    [[ $format_bad -gt 0 ]] || format_bad=1  # clang-format itself failed
    cat "$tmp/format.log" >&2
    echo "lint: fix with: $clang_format -i <file>" >&2
  fi
fi

# (b) clang-tidy over harness/*.cpp and families/*.cpp (not their tests/) as compiled in
# BUILD_DIR, every entry of such a file (kernel_check.cpp is built twice, once emulated) but
# those of a test target, in a database of their own: a family's cuda.cpp is compiled again into
# its fake-runtime test, with the tests' GCC precompiled header, which clang cannot read.
mkdir "$tmp/db"
python3 - "$build/compile_commands.json" "$root/" "$build/" "$tmp/db/compile_commands.json" >"$tmp/tidy.txt" <<'EOF'
import json, os, sys
db, root, build, out = sys.argv[1:5]
kept, test_only = [], set()
for e in json.load(open(db)):
    f = os.path.normpath(os.path.join(e.get("directory", ""), e["file"]))
    rel = os.path.relpath(f, root)
    if rel.startswith(("harness/", "families/")) and "/tests/" not in rel and f.endswith(".cpp") \
            and not f.startswith(build):
        if "cmake_pch" in e.get("command", " ".join(e.get("arguments", []))):
            test_only.add(f)
        else:
            kept.append(e)
files = {os.path.normpath(os.path.join(e.get("directory", ""), e["file"])) for e in kept}
for f in sorted(test_only - files):
    print(f"lint: {f} is compiled only into a test target; clang-tidy cannot check it from there", file=sys.stderr)
    sys.exit(2)
json.dump(kept, open(out, "w"), indent=1)
print("\n".join(sorted(files)))
EOF
tidy_files=$(grep -c . "$tmp/tidy.txt" || true)
[[ $tidy_files -gt 0 ]] || die "no harness/*.cpp or families/*.cpp in $build/compile_commands.json"
mkdir "$tmp/tidy"
# Each file's output to its own log; a non-zero exit (WarningsAsErrors: '*') marks a finding.
xargs -d '\n' -P 2 -I{} sh -c \
  'log="$3/$(printf %s "$2" | tr / _).log"; "$0" -p "$1" --quiet "$2" >"$log" 2>&1 || echo "$2" >>"$3/failed"' \
  "$clang_tidy" "$tmp/db" {} "$tmp/tidy" <"$tmp/tidy.txt"
tidy_findings=$(cat "$tmp/tidy/"*.log | { grep -E ': (warning|error): ' || true; } | sort -u | wc -l)
tidy_bad=0
[[ -f "$tmp/tidy/failed" ]] && tidy_bad=$(sort -u "$tmp/tidy/failed" | wc -l)
if [[ $tidy_findings -gt 0 || $tidy_bad -gt 0 ]]; then
  cat "$tmp/tidy/"*.log | grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' >&2 || true
fi

# (c) pyflakes: every tracked .py under scripts/ and tests/python.
venv_python="$venv/bin/python"
"$venv_python" -m pyflakes --version >/dev/null 2>&1 ||
  die "no pyflakes in ${GPUBENCH_VENV:-$root/.venv} (scripts/test.sh installs scripts/requirements-test.txt there)"
git -C "$root" ls-files -- 'scripts/*.py' 'tests/python/*.py' >"$tmp/python.txt" 2>/dev/null ||
  find scripts tests/python -name '*.py' | sort >"$tmp/python.txt"
python_files=$(grep -c . "$tmp/python.txt" || true)
python_findings=0
if [[ $python_files -gt 0 ]]; then
  xargs -d '\n' "$venv_python" -m pyflakes <"$tmp/python.txt" >"$tmp/pyflakes.log" 2>&1 || true
  python_findings=$(grep -c . "$tmp/pyflakes.log" || true)
  [[ $python_findings -eq 0 ]] || cat "$tmp/pyflakes.log" >&2
fi

status=ok
if [[ $format_bad -gt 0 || $tidy_findings -gt 0 || $tidy_bad -gt 0 || $python_findings -gt 0 ]]; then status=FAILED; fi
printf 'lint: %s: clang-format %d files, %d need formatting; clang-tidy %d files, %d findings in %d files; pyflakes %d files, %d findings (%ds)\n' \
  "$status" "$format_files" "$format_bad" "$tidy_files" "$tidy_findings" "$tidy_bad" "$python_files" "$python_findings" \
  "$((SECONDS - start))"
[[ $status == ok ]]
