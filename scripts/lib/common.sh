# Shared by the README's two commands: the Python virtual environment and the CMake builds.
# Sourced, not run.

GPUBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Each step line carries the time since the script started (bash's SECONDS), so a slow phase of
# the test command shows in its log.
say() { printf '==> [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 2; }

# The settings, checked before any work (a bad GPUBENCH_JOBS failed only after a configure, with
# cmake's usage; a GPUBENCH_VENV naming a file was blamed on a missing python3-venv; an empty one
# silently meant the default).
for _var in GPUBENCH_VENV GPUBENCH_JOBS; do
  if [[ -n "${!_var+set}" && -z "${!_var}" ]]; then die "$_var is set but empty (unset it for the default)"; fi
done
GPUBENCH_VENV="${GPUBENCH_VENV:-$GPUBENCH_ROOT/.venv}"
GPUBENCH_JOBS="${GPUBENCH_JOBS:-$(nproc 2>/dev/null || echo 2)}"
[[ "$GPUBENCH_JOBS" =~ ^[1-9][0-9]{0,3}$ ]] || die "GPUBENCH_JOBS=$GPUBENCH_JOBS is not a whole number of jobs from 1 to 9999"
if [[ -e "$GPUBENCH_VENV" && ! -d "$GPUBENCH_VENV" ]]; then
  die "GPUBENCH_VENV=$GPUBENCH_VENV is not a folder"
fi

# ensure_tools CMD:PACKAGE ...: installs the Debian packages of missing commands when this runs
# as root with apt-get (a fresh machine); otherwise says what to install and stops.
ensure_tools() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
  done
  [[ ${#missing[@]} -eq 0 ]] && return
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    say "installing ${missing[*]}"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >&2 ||
      die "apt-get install ${missing[*]} failed"
  else
    die "missing tools: install ${missing[*]}"
  fi
}

# ensure_debs PACKAGE ...: Debian packages that are libraries, not commands (Google Benchmark,
# GoogleTest). Installed when missing and this runs as root with apt-get; on other systems the
# build's find_package / FetchContent fallback decides.
ensure_debs() {
  command -v dpkg-query >/dev/null || return 0
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    say "installing ${missing[*]}"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >&2 ||
      die "apt-get install ${missing[*]} failed"
  fi
}

# python3 -m venv needs Debian's python3-venv (ensurepip); a plain python3 may lack it.
ensure_python_venv_module() {
  python3 -c 'import ensurepip, venv' 2>/dev/null && return
  ensure_tools "__no_such_command__:python3-venv"
}

# ensure_venv [FILE]: the venv with the packages of scripts/FILE (default requirements.txt, what
# the tools need; the test command asks for requirements-test.txt, which includes it), created
# when missing and installed into again only when those requirements change.
ensure_venv() {
  local name="${1:-requirements.txt}"
  local req="$GPUBENCH_ROOT/scripts/$name" stamp="$GPUBENCH_VENV/.$name.sha256"
  local want
  want="$(cat "$GPUBENCH_ROOT/scripts/requirements.txt" "$req" | sha256sum | cut -d' ' -f1)"
  if [[ -x "$GPUBENCH_VENV/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return
  fi
  if [[ ! -x "$GPUBENCH_VENV/bin/python" ]]; then
    ensure_tools python3:python3
    ensure_python_venv_module
    say "creating the Python environment in $GPUBENCH_VENV"
    python3 -m venv "$GPUBENCH_VENV" || die "python3 -m venv failed (apt-get install python3-venv)"
    "$GPUBENCH_VENV/bin/python" -m pip install --quiet --upgrade pip >&2
  fi
  say "installing scripts/$name into $GPUBENCH_VENV"
  "$GPUBENCH_VENV/bin/python" -m pip install --quiet -r "$req" >&2 || die "pip install -r $req failed"
  echo "$want" >"$stamp"
}

# ensure_build DIR TARGET [cmake -D options...]: configures DIR (first time; the options are
# applied again whenever they differ, so both commands can share build/) and builds TARGET
# ("all" for everything).
ensure_build() {
  local dir="$1" target="$2"
  shift 2
  ensure_tools cmake:cmake g++:g++ git:git
  ensure_debs libbenchmark-dev libgtest-dev libre2-dev
  local generator=()
  if [[ ! -f "$dir/CMakeCache.txt" ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
  local stamp="$dir/.gpubench-configure-options"
  if [[ ! -f "$dir/CMakeCache.txt" || ! -f "$stamp" || "$(cat "$stamp")" != "$*" ]]; then
    say "configuring $dir"
    cmake -S "$GPUBENCH_ROOT" -B "$dir" "${generator[@]}" "$@" >&2 || die "cmake configure failed"
    echo "$*" >"$stamp"
  fi
  say "building $dir ($target)"
  cmake --build "$dir" --target "$target" -j "$GPUBENCH_JOBS" >&2 || die "build failed"
}
