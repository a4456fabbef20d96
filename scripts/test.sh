#!/usr/bin/env bash
# Every test: the Release build with CUDA (when a toolkit is present), the style gate
# (scripts/lint.sh: clang-format, clang-tidy and pyflakes) and the Release ctest suite
# (unit, SIMT emulation, instruction contracts), the CUDA host code and the family launchers' host
# half against CUDA 12's headers (scripts/cuda12_api_check.py, the launchers with clang 16) and
# the device code as far as CUDA 12's PyPI wheels reach (scripts/cuda12_device_check.py), the
# host-side code again under
# AddressSanitizer + UndefinedBehaviorSanitizer (its ctest suite, and 200 fuzzed gpubench command
# lines against it), and the Python tests (pytest), which also run gpubench end to end on the
# host backend, fuzz the scripts' command lines and open the HTML report in a headless
# Chromium (Debian's `chromium`, installed here when missing).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$GPUBENCH_ROOT"

ensure_tools clang-format:clang-format chromium:chromium
ensure_venv requirements-test.txt
ensure_build "$GPUBENCH_ROOT/build" all -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_TESTS=ON
say "lint (clang-format, clang-tidy, pyflakes)"
"$GPUBENCH_ROOT/scripts/lint.sh" "$GPUBENCH_ROOT/build"
say "ctest (Release)"
ctest --test-dir build --no-tests=error --output-on-failure -j "$GPUBENCH_JOBS"
if [[ -x build/harness/gpubench_kernel_check ]]; then  # built with CUDA
  ensure_tools clang++-16:clang-16  # the launchers' host half in clang's CUDA mode (no CUDA 12 nvcc here)
  say "CUDA 12 API (the CUDA host code and the launchers' host half against CUDA 12.0's and 12.9's headers)"
  "$GPUBENCH_VENV/bin/python" scripts/cuda12_api_check.py build
  say "CUDA 12 device code (the kernels' PTX by CUDA 12.0's and 12.9's ptxas, their sources by 12.0's NVRTC, Thrust/CUB against 12.9's CCCL)"
  "$GPUBENCH_VENV/bin/python" scripts/cuda12_device_check.py build
fi

# -O1 -g1: what AddressSanitizer recommends (-O1 or more), with line tables for its stack traces;
# half the compile time of -O2 -g, this tree's build being the test command's longest phase.
ensure_build "$GPUBENCH_ROOT/build-sanitize" all -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUBENCH_TESTS=ON -DGPUBENCH_CUDA=OFF \
  -DGPUBENCH_SANITIZE=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
say "ctest (host code under ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-sanitize --no-tests=error --output-on-failure -j "$GPUBENCH_JOBS"

ensure_debs libbenchmark-tools slurmctld slurmd slurm-client munge  # GB's compare.py; Slurm: the fleet test
say "fuzzed command lines against the ASan + UBSan gpubench"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  GPUBENCH_BIN="$GPUBENCH_ROOT/build-sanitize/gpubench" "$GPUBENCH_VENV/bin/python" -m pytest -q \
  tests/python/test_fuzz_cli.py -k gpubench

# In parallel workers (pytest-xdist): many tests wait on a gpubench run, a signal or a browser.
# At most 4: each host gpubench run uses every CPU, and a few tests stop runs after a delay.
# The fuzzed gpubench command lines ran above against the sanitizer build, which is host-only:
# against this build again only when it has CUDA (device selection and the CUDA rows' listing are
# code the host-only build does not have); without CUDA the two are the same code (30 s saved).
workers=$((GPUBENCH_JOBS < 4 ? GPUBENCH_JOBS : 4))
fuzzed_above=()
[[ -x build/harness/gpubench_kernel_check ]] || fuzzed_above=(--deselect tests/python/test_fuzz_cli.py::test_fuzz_gpubench)
say "pytest ($workers workers)"
GPUBENCH_BIN="$GPUBENCH_ROOT/build/gpubench" "$GPUBENCH_VENV/bin/python" -m pytest -q -n "$workers" tests/python \
  "${fuzzed_above[@]}"
