#!/usr/bin/env bash
# Everything CI checks: install what is needed, then
#   1. a warnings-as-errors build and every test (ctest, minus the `long` label);
#   after each ctest, tests/lib/ctest_required.py fails CI when a test of tests/ci-required-tests.txt
#   that the run selects skipped, did not run or is not registered;
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build and its unit tests;
#   3. libFuzzer targets built with clang, each run for a short time;
#   4. the packages as users meet them: the packages of this build installed in Debian 12 chroots,
#      the signed repositories, deps.sh on a fresh Debian 12 (root, network).
#   5. with HIPSTACK_TEST_RELEASE=1 only: the whole release (superbuild, ~25 minutes on 2 cores) and
#      its container images, label superbuild-release: run before a release and reported with it (CI
#      stays under 45 minutes). Release N+1 upgrading this build's packages is one more whole build:
#      label long, run by hand (docs/packaging.md, "Tests").
# It ends, passed or failed, with each step's wall time and the ten tests closest to their timeout
# (tests/lib/ctest_margins.py; docs/testing.md, "Margins").
# Usage: scripts/test.sh            (HIPSTACK_TEST_QUICK=1: step 1 only; HIPSTACK_TEST_RELEASE=1: step 5 too)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
mkdir -p "$top/out"
steps_file=$top/out/steps.tsv
: >"$steps_file"
ctest_runs=()  # STEP:BUILD_DIR:JUNIT of each ctest run, for the margins report

# Runs one command as a named step and records its wall time and result in $steps_file.
# Usage: step NAME COMMAND [ARGS...]   (one command: errexit does not reach inside a `||`)
step() {
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  printf '%s\t%s\t%s\n' "$name" $((SECONDS - start)) "$([ $rc -eq 0 ] && echo passed || echo "failed (exit $rc)")" \
         >>"$steps_file"
  return $rc
}
report() {
  local rc=$? runs=() r
  for r in "${ctest_runs[@]}"; do runs+=(--run "$r"); done
  echo "== step times and test margins"
  python3 "$top/tests/lib/ctest_margins.py" report --steps "$steps_file" "${runs[@]}" || true
  return $rc
}
trap report EXIT

step deps "$top/scripts/deps.sh" test

# ctest in BUILD_DIR with these -L/-LE selections, then the check that every test of
# tests/ci-required-tests.txt that the selection includes was registered, ran and passed: a skip (77),
# a test not run or not registered fails CI, named with its reason (docs/testing.md, "Required tests").
# Every test BUILD_DIR registers must have a TIMEOUT: without one there is no margin to watch, and
# ctest would wait for it forever (docs/testing.md, "Margins").
# Usage: run_ctest STEP BUILD_DIR [-L REGEX] [-LE REGEX] [other ctest arguments]
run_ctest() {
  local step=$1 dir=$2 rc=0 sel=()
  shift 2
  local args=("$@") i
  for ((i = 0; i < ${#args[@]}; i++)); do
    case ${args[i]} in -L|-LE) sel+=("${args[i]}" "${args[i+1]}") ;; esac
  done
  python3 "$top/tests/lib/ctest_margins.py" check --build-dir "$dir" || return 1
  ctest_runs+=("$step:$dir:$top/out/ctest-$step.xml")
  local output_args
  mapfile -t output_args < <(python3 "$top/tests/lib/ctest_required.py" ctest-args)
  (cd "$dir" && ctest -j "$jobs" --output-on-failure "${output_args[@]}" --output-junit "$top/out/ctest-$step.xml" "$@") || rc=$?
  python3 "$top/tests/lib/ctest_required.py" check --required "$top/tests/ci-required-tests.txt" \
          --build-dir "$dir" --junit "$top/out/ctest-$step.xml" "${sel[@]}" || rc=1
  return $rc
}

echo "== build (warnings are errors) and test"
# Laid out for packages (HIPSTACK_PACKAGING): packaging.packages makes and checks this build's deb and
# rpm files. The packages as users meet them (more builds, Debian chroots) come in step 4.
# Unity builds (HIPSTACK_UNITY_BUILD) for the three builds of this script: the larger targets' headers
# parsed once per unit instead of once per file (docs/testing.md, "Margins").
step 1-main-configure cmake -S "$top" -B "$top/build-ci" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHIPSTACK_WERROR=ON \
      -DHIPSTACK_PACKAGING=ON -DHIPSTACK_UNITY_BUILD=ON >/dev/null
step 1-main-build cmake --build "$top/build-ci" -j "$jobs"
# fuzz and nothing else: this build registers no fuzz target (step 3 runs them).
step 1-main-tests run_ctest 1-main "$top/build-ci" -LE "long|install-chroot|superbuild-release|fuzz"

# validation/ builds for the platform the main build found (nvcc first); CI proves the other one too:
# the conformance suite and the kernels compiled by Debian's hipcc for the AMD targets.
platform=$(sed -n 's/^HIPSTACK_HIP_PLATFORM:STRING=//p' "$top/build-ci/CMakeCache.txt")
if [ "$platform" != amd ] && command -v hipcc >/dev/null; then
  echo "== validation/ for AMD GPUs (hipcc; main build: ${platform:-none})"
  step 1-hip-amd-configure cmake -S "$top/validation" -B "$top/build-hip-amd" -G Ninja -DHIPSTACK_HIP_PLATFORM=amd \
       -DHIPSTACK_WERROR=ON >/dev/null
  step 1-hip-amd-build cmake --build "$top/build-hip-amd" -j "$jobs"
  step 1-hip-amd-tests run_ctest 1-hip-amd "$top/build-hip-amd" -L "validation|gpu"
fi

[ "${HIPSTACK_TEST_QUICK:-0}" = 1 ] && exit 0

echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
# validation/ is left out of the sanitizer and fuzzing builds: its programs are nvcc/hipcc GPU code.
# So are the superbuild and release suites: they build and test packages, not this build's programs.
# Built with clang: the same sanitizers, in about a third of gcc's time for this tree (5.7 minutes
# instead of about 20 on two cores; docs/testing.md, "Margins"), and a second compiler's warnings.
step 2-asan-configure env CC=clang-14 CXX=clang++-14 cmake -S "$top" -B "$top/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
     -DHIPSTACK_WERROR=ON -DHIPSTACK_SANITIZE=address,undefined -DHIPSTACK_BUILD_VALIDATION=OFF -DHIPSTACK_UNITY_BUILD=ON >/dev/null
step 2-asan-build cmake --build "$top/build-asan" -j "$jobs"
# clang's runtime names functions through llvm-symbolizer (llvm-14, scripts/deps.sh), which a fresh
# machine has only under llvm-14's own folder: without it a report has addresses alone and
# scripts/lsan.supp matches nothing. Kept for step 3's fuzzers too.
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
# The sanitizers' options for this step only (the fuzz step keeps libFuzzer's own). LeakSanitizer
# prints no table of the suppressions it used: the glibc report of lsan.supp comes in some runs and
# not others, and its table in a program's stderr made two runs of one command differ
# (cli.capture-roundtrip compares them).
export ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions="$top/scripts/lsan.supp":print_suppressions=0 \
       UBSAN_OPTIONS=print_stacktrace=1
step 2-asan-tests run_ctest 2-asan "$top/build-asan" \
     -LE "long|differential|install|packaging|superbuild|fuzz|validation|memory-bounds|abi|python"
unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS

echo "== libFuzzer (short runs; long runs are reported in docs/testing.md)"
step 3-fuzz-configure env CC=clang-14 CXX=clang++-14 cmake -S "$top" -B "$top/build-fuzz" -G Ninja \
     -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHIPSTACK_FUZZ=ON -DHIPSTACK_SANITIZE=address,undefined -DHIPSTACK_BUILD_VALIDATION=OFF \
     -DHIPSTACK_UNITY_BUILD=ON >/dev/null
step 3-fuzz-build cmake --build "$top/build-fuzz" -j "$jobs" --target hipstack_fuzzers
step 3-fuzz-tests run_ctest 3-fuzz "$top/build-fuzz" -L fuzz
# 4. The packages as users meet them (docs/packaging.md): this build's packages installed from a signed
# apt repository in a Debian 12 chroot and with rpm --root, the signed repositories and hipstack-install,
# deps.sh on a fresh Debian 12. Needs root and deb.debian.org (the tests skip, 77, without them; a
# required one skipping fails CI). Two at a time: they wait on the network and dpkg more than on the
# processors; they share one debootstrap base (flock).
echo "== packages, repositories and installs"
step 4-packages-tests run_ctest 4-packages "$top/build-ci" -L "install-chroot"
# 5. The whole release (docs/superbuild.md): superbuild/build.sh, the release installed from its signed
# apt repository in a Debian 12 chroot (a HIP program for gfx90a with the installed packages, rocminfo,
# purge) and with rpm --root, and its container images run with podman.
if [[ "${HIPSTACK_TEST_RELEASE:-0}" == 1 ]]; then
  echo "== the whole release and its images"
  step 5-release-tests run_ctest 5-release "$top/build-ci" -L "superbuild-release"
fi
echo "== all tests passed"
