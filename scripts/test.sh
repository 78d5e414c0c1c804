#!/usr/bin/env bash
# Everything CI checks: install what is needed, then
#   1. a warnings-as-errors build and every test (ctest, minus the `long` label);
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build and its unit tests;
#   3. libFuzzer targets built with clang, each run for a short time;
#   4. the packages as users meet them: the whole release (superbuild), its container images, release
#      N+1 upgrading this build's packages, the signed repositories (Debian 12 chroots; root, network).
# Usage: scripts/test.sh            (set HIPSTACK_TEST_QUICK=1 to skip steps 2 to 4)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
"$top/scripts/deps.sh" test

echo "== build (warnings are errors) and test"
# Laid out for packages (HIPSTACK_PACKAGING): packaging.packages makes and checks this build's deb and
# rpm files. The packages as users meet them (more builds, Debian chroots) come in step 4.
cmake -S "$top" -B "$top/build-ci" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHIPSTACK_WERROR=ON \
      -DHIPSTACK_PACKAGING=ON >/dev/null
cmake --build "$top/build-ci" -j "$jobs"
(cd "$top/build-ci" && ctest -j "$jobs" -LE "long|install-chroot|superbuild-release" --output-on-failure)

# validation/ builds for the platform the main build found (nvcc first); CI proves the other one too:
# the conformance suite and the kernels compiled by Debian's hipcc for the AMD targets.
platform=$(sed -n 's/^HIPSTACK_HIP_PLATFORM:STRING=//p' "$top/build-ci/CMakeCache.txt")
if [ "$platform" != amd ] && command -v hipcc >/dev/null; then
  echo "== validation/ for AMD GPUs (hipcc; main build: ${platform:-none})"
  cmake -S "$top/validation" -B "$top/build-hip-amd" -G Ninja -DHIPSTACK_HIP_PLATFORM=amd -DHIPSTACK_WERROR=ON >/dev/null
  cmake --build "$top/build-hip-amd" -j "$jobs"
  (cd "$top/build-hip-amd" && ctest -j "$jobs" --output-on-failure)
fi

[ "${HIPSTACK_TEST_QUICK:-0}" = 1 ] && exit 0

echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
# validation/ is left out of the sanitizer and fuzzing builds: its programs are nvcc/hipcc GPU code.
# So are the superbuild and release suites: they build and test packages, not this build's programs.
cmake -S "$top" -B "$top/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHIPSTACK_WERROR=ON \
      -DHIPSTACK_SANITIZE=address,undefined -DHIPSTACK_BUILD_VALIDATION=OFF >/dev/null
cmake --build "$top/build-asan" -j "$jobs"
(cd "$top/build-asan" && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions="$top/scripts/lsan.supp" UBSAN_OPTIONS=print_stacktrace=1 \
   ctest -j "$jobs" -LE "long|differential|install|packaging|superbuild" --output-on-failure)

echo "== libFuzzer (short runs; long runs are reported in docs/testing.md)"
CC=clang-14 CXX=clang++-14 cmake -S "$top" -B "$top/build-fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DHIPSTACK_FUZZ=ON -DHIPSTACK_SANITIZE=address,undefined -DHIPSTACK_BUILD_VALIDATION=OFF >/dev/null
cmake --build "$top/build-fuzz" -j "$jobs" --target fuzz_gpu_metrics fuzz_text_parsers fuzz_kfd_properties fuzz_validate_inputs
(cd "$top/build-fuzz" && ctest -j "$jobs" -L fuzz --output-on-failure)
# 4. The packages as users meet them (docs/packaging.md, docs/superbuild.md): the whole release made
# by superbuild/build.sh, installed from its signed apt repository in a Debian 12 chroot (a HIP program
# for gfx90a with the installed packages, rocminfo, purge) and with rpm --root; release N+1 built and
# installed over this build's packages (upgrade, side by side, switch, purge); the release's container
# images run with podman; the signed repositories and hipstack-install. Needs root and deb.debian.org
# (the tests skip, 77, without them). Two at a time: the chroot installs wait on the network and dpkg
# while the release builds use the processors; they share one debootstrap base (flock).
echo "== packages, repositories, installs and images"
(cd "$top/build-ci" && ctest -j "$jobs" -L "install-chroot|superbuild-release" --output-on-failure)
echo "== all tests passed"
