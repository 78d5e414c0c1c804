#!/usr/bin/env bash
# The current track's development image (issue 18: what a developer targeting MI300X pulls), built from
# the track's release in OUTDIR (superbuild/build.sh --track current) with
# `containers/build.sh --track current OUTDIR dev` and run with podman: tagged hipstack-dev:RELEASE
# (X.Y.Z-rocm7.2) on a Debian sid base; hipconfig --version is ROCm 7.2; hipcc builds a HIP program
# for gfx942 and gfx950 whose fat binary holds both code objects, and it runs (no GPU: 77);
# hipstack-validate lists the kernels; libhipstack-smi's pkg-config and CMake files are found.
#   test_track_dev.sh OUTDIR
# Exit 0 pass, 1 fail, 77 skip (not root, podman or debootstrap missing, no release in OUTDIR).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: test_track_dev.sh OUTDIR" >&2; exit 2; }
out=$(realpath "$1")
here=$(dirname "$(realpath "$0")")
top=$(realpath "$here/../..")
skip() { echo "SKIP: $1"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (podman build --isolation=chroot, podman run)"
for tool in podman runc debootstrap; do command -v "$tool" >/dev/null || skip "$tool is not installed"; done
[ -f "$out/packages/.done" ] || skip "$out holds no finished superbuild"
read -r version release track < <(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["version"], m["release"], m["track"])' "$out/stage/manifest.json")
[ "$track" = current ] || { echo "FAIL: $out holds track '$track', not current"; exit 1; }
# shellcheck source=../lib/checks.sh
source "$here/../lib/checks.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/hipstack-track-dev.XXXXXX")
trap 'rm -rf "$work"; echo "# $failures failure(s)"' EXIT
# shellcheck source=podman_conf.sh
source "$here/podman_conf.sh"
podman_test_conf "$work"

start=$(date +%s)
"$top/containers/build.sh" --track current "$out" dev || { echo "FAIL: containers/build.sh --track current"; exit 1; }
dev=localhost/hipstack-dev:$release
podman image exists "$dev" && pass "containers/build.sh --track current: $dev in $(( $(date +%s) - start )) s" || fail "no image $dev"
[ "$(podman image inspect --format '{{index .Labels "org.opencontainers.image.version"}}' "$dev")" = "$version" ] &&
  pass "$dev: OCI version label $version" || fail "$dev: version label"
run() { podman run --rm --network none --no-healthcheck "$@"; }
got=$(run "$dev" sh -c '. /etc/os-release; echo "$PRETTY_NAME"; hipconfig --version' 2>&1 || true)
grep -q "sid" <<<"$got" && grep -q "^7\.2\." <<<"$got" && pass "Debian sid base, hipconfig --version $(tail -1 <<<"$got")" ||
  fail "base and hipconfig: $got"
cp "$top/tests/superbuild/saxpy.hip" "$work/"
got=$(run -v "$work:/work" "$dev" sh -c 'hipcc --offload-arch=gfx942 --offload-arch=gfx950 -O2 saxpy.hip -o saxpy &&
  b=$(ls /usr/lib/llvm-*/bin/clang-offload-bundler | tail -1) && $(dirname $b)/llvm-objcopy --dump-section .hip_fatbin=fb saxpy &&
  $b --list --type=o --input=fb && ./saxpy; echo "exit $?"' 2>&1 || true)
grep -qx "hipv4-amdgcn-amd-amdhsa--gfx942" <<<"$got" && grep -qx "hipv4-amdgcn-amd-amdhsa--gfx950" <<<"$got" && grep -qx "exit 77" <<<"$got" &&
  pass "hipcc for gfx942 and gfx950 in the dev image; the program runs (no GPU: 77)" || fail "hipcc in the dev image: $got"
got=$(run "$dev" hipstack-validate --list 2>&1 || true)
grep -E "^level 3\+ +gemm" <<<"$got" >/dev/null && grep -E "^level 2\+ +stream" <<<"$got" >/dev/null && pass "hipstack-validate --list" ||
  fail "hipstack-validate --list: $got"
got=$(run "$dev" sh -c 'pkg-config --modversion hipstack-smi && test -f /opt/hipstack/lib/cmake/hipstack-smi/hipstack-smi-config.cmake && readlink -f /opt/hipstack' 2>&1 || true)
grep -qx "$version" <<<"$got" && grep -qx "/opt/hipstack-$release" <<<"$got" && pass "libhipstack-smi $version's pkg-config and CMake files in /opt/hipstack-$release" ||
  fail "development files: $got"
[ $failures -eq 0 ]
