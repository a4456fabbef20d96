# Shared by the README's two commands: the Python virtual environment and the CMake builds.
# Sourced, not run.

GPUBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
GPUBENCH_VENV="${GPUBENCH_VENV:-$GPUBENCH_ROOT/.venv}"
GPUBENCH_JOBS="${GPUBENCH_JOBS:-$(nproc 2>/dev/null || echo 2)}"

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 2; }

# Creates the venv from scripts/requirements.txt, again only when the requirements change.
ensure_venv() {
  local req="$GPUBENCH_ROOT/scripts/requirements.txt" stamp="$GPUBENCH_VENV/.requirements.sha256"
  local want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [[ -x "$GPUBENCH_VENV/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return
  fi
  command -v python3 >/dev/null || die "python3 is required (apt-get install python3 python3-venv)"
  say "creating the Python environment in $GPUBENCH_VENV"
  python3 -m venv "$GPUBENCH_VENV" || die "python3 -m venv failed (apt-get install python3-venv)"
  "$GPUBENCH_VENV/bin/python" -m pip install --quiet --upgrade pip >&2
  "$GPUBENCH_VENV/bin/python" -m pip install --quiet -r "$req" >&2 || die "pip install -r $req failed"
  echo "$want" >"$stamp"
}

# ensure_build DIR [cmake -D options...]: configures (once) and builds DIR.
ensure_build() {
  local dir="$1"
  shift
  command -v cmake >/dev/null || die "cmake is required (apt-get install cmake)"
  local generator=()
  if [[ ! -f "$dir/CMakeCache.txt" ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
  if [[ ! -f "$dir/CMakeCache.txt" ]]; then
    say "configuring $dir"
    cmake -S "$GPUBENCH_ROOT" -B "$dir" "${generator[@]}" "$@" >&2 || die "cmake configure failed"
  fi
  say "building $dir"
  cmake --build "$dir" -j "$GPUBENCH_JOBS" >&2 || die "build failed"
}
