#!/usr/bin/env bash
# The container images as users run them (containers/, docs/deploy.md), built from the release in
# OUTDIR (superbuild/build.sh) with containers/build.sh and run with podman:
#   hipstack-smi:      --version; `list --sysfs-root` on a capture mounted into the container;
#                      hipstack-info on it; its OCI labels; its health check.
#   hipstack-exporter: runs as uid 999, not root; serves /metrics from a mounted capture (the
#                      capture's GPUs, the release's build_info, promtool check metrics); /healthz; its
#                      health check passes.
#   hipstack-dev:      hipcc compiles a HIP program for gfx90a; hipstack-validate lists its modules;
#                      the headers and CMake package of libhipstack-smi are found.
#   test_images.sh OUTDIR CAPTURE_SYS_DIR
# podman run here needs runc with the nofile/nproc limits at 1024 (the machine refuses raising them):
# the test's own containers.conf says so (../shared/reference/MACHINE-NOTES.md).
# Exit 0 pass, 1 fail, 77 skip (not root, podman or debootstrap missing, no release in OUTDIR).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: test_images.sh OUTDIR CAPTURE_SYS_DIR" >&2; exit 2; }
out=$(realpath "$1") capture=$(realpath "$2")
here=$(dirname "$(realpath "$0")")
top=$(realpath "$here/../..")
skip() { echo "SKIP: $1"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (podman build --isolation=chroot, podman run)"
for tool in podman runc debootstrap promtool nsenter; do command -v "$tool" >/dev/null || skip "$tool is not installed"; done
[ -f "$out/packages/.done" ] || skip "$out holds no finished superbuild"
version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$out/stage/manifest.json")

# shellcheck source=../lib/checks.sh
source "$here/../lib/checks.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/hipstack-images-test.XXXXXX")
containers=()
cleanup() {
  local c
  for c in "${containers[@]}"; do podman rm -f "$c" > /dev/null 2>&1 || true; done
  rm -rf "$work"
  echo "# $failures failure(s)"
}
trap cleanup EXIT
# shellcheck source=podman_conf.sh
source "$here/podman_conf.sh"
podman_test_conf "$work"

start=$(date +%s)
"$top/containers/build.sh" "$out" || { echo "FAIL: containers/build.sh"; exit 1; }
pass "containers/build.sh: three images in $(( $(date +%s) - start )) s"
smi=localhost/hipstack-smi:$version exporter=localhost/hipstack-exporter:$version dev=localhost/hipstack-dev:$version

echo "== $smi"
label() { podman image inspect --format "{{index .Labels \"$2\"}}" "$1"; }
for image in "$smi" "$exporter" "$dev"; do
  [ "$(label "$image" org.opencontainers.image.version)" = "$version" ] && [ -n "$(label "$image" org.opencontainers.image.source)" ] &&
    [ -n "$(label "$image" org.opencontainers.image.licenses)" ] && [ -n "$(label "$image" org.opencontainers.image.revision)" ] &&
    pass "$image: OCI labels (version $version, source, licenses, revision)" || fail "$image: OCI labels"
  [ -n "$(podman image inspect --format '{{.HealthCheck}}' "$image" 2>/dev/null | grep -v '^<nil>$' || true)" ] &&
    pass "$image: has a health check" || fail "$image: no health check"
done
# Health checks are run on demand below: podman's interval timers need systemd, which is not PID 1 here.
run() { podman run --rm --network none --no-healthcheck "$@"; }
got=$(run "$smi" --version 2>&1 || true)
[ "$got" = "hipstack-smi $version" ] && pass "hipstack-smi --version: $got" || fail "hipstack-smi --version: $got"
got=$(run -v "$capture:/capture:ro" "$smi" list --sysfs-root /capture 2>&1 || true)
[ "$(grep -c 'AMD Instinct MI300X' <<<"$got")" = 8 ] && pass "hipstack-smi list --sysfs-root /capture: 8 GPUs" || fail "list on the capture: $got"
got=$(run -v "$capture:/capture:ro" --entrypoint /opt/hipstack/bin/hipstack-info "$smi" --no-checks --sysfs-root /capture 2>&1 || true)
[ "$(grep -c gfx942 <<<"$got")" -ge 8 ] && pass "hipstack-info --sysfs-root /capture: gfx942 agents" || fail "hipstack-info: $(head -5 <<<"$got")"

echo "== $exporter"
name=hipstack-test-exporter-$$
containers+=("$name")
# As users run it, with the image's own configuration (port 9400), in a network namespace of its own
# (--network none: no CNI network is needed); the test reaches it from inside that namespace.
podman run -d --name "$name" --network none --health-interval disable -v "$capture:/capture:ro" "$exporter" \
  --sysfs-root /capture > /dev/null 2>> "$work/podman.log"
listening=""
for _ in $(seq 100); do
  listening=$(podman logs "$name" 2>&1 | grep -m1 "listening on" || true)
  [ -n "$listening" ] && break
  sleep 0.2
done
grep "(port 9400)" <<<"$listening" >/dev/null && pass "hipstack-smid: $listening" ||
  { fail "hipstack-smid did not start on port 9400: $(podman logs "$name" 2>&1 | tail -5)"; exit 1; }
pid=$(podman inspect --format '{{.State.Pid}}' "$name")
uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
[ "$uid" = 999 ] && pass "the exporter runs as uid 999, not root" || fail "the exporter runs as uid $uid"
get() { nsenter --net="/proc/$pid/ns/net" python3 -c 'import sys,urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1"; }
metrics=""
for _ in $(seq 50); do
  metrics=$(get http://127.0.0.1:9400/metrics 2>/dev/null) && grep '^hipstack_gpu_up' <<<"$metrics" >/dev/null && break
  sleep 0.2
done
[ "$(grep -c '^hipstack_gpu_up{' <<<"$metrics")" = 8 ] && pass "/metrics: the capture's 8 GPUs" || fail "/metrics: $(head -5 <<<"$metrics")"
grep "^hipstack_smid_build_info{version=\"$version\"" <<<"$metrics" >/dev/null && pass "/metrics: build_info $version" || fail "/metrics: no build_info $version"
promtool check metrics <<<"$metrics" > "$work/promtool.out" 2>&1 && pass "promtool check metrics" || { fail "promtool check metrics"; head "$work/promtool.out"; }
rc=0; podman healthcheck run "$name" > /dev/null 2>> "$work/podman.log" || rc=$?
[ $rc = 0 ] && pass "podman healthcheck run: healthy (the image's HEALTHCHECK, GET /healthz)" || fail "podman healthcheck run: rc=$rc"
podman exec -e HIPSTACK_SMID_PORT=1 "$name" /usr/local/bin/hipstack-smid-healthcheck 2>/dev/null &&
  fail "the health check passes where nothing answers" || pass "the health check fails where nothing answers"
podman rm -f "$name" > /dev/null 2>> "$work/podman.log"

echo "== $dev"
cp "$top/tests/superbuild/saxpy.hip" "$work/saxpy.hip"
got=$(run -v "$work:/work" "$dev" sh -c 'hipcc --offload-arch=gfx90a -O2 saxpy.hip -o saxpy && roc-obj-ls saxpy && ./saxpy; echo "exit $?"' 2>&1 || true)
grep "amdgcn-amd-amdhsa--gfx90a" <<<"$got" >/dev/null && grep -x "exit 77" <<<"$got" >/dev/null &&
  pass "hipcc --offload-arch=gfx90a in the dev image; the program runs (no GPU: 77)" || fail "hipcc in the dev image: $got"
got=$(run "$dev" hipstack-validate --list 2>&1 || true)
grep -E "^level 3\+ +gemm" <<<"$got" >/dev/null && grep -E "^level 2\+ +stream" <<<"$got" >/dev/null && pass "hipstack-validate --list" || fail "hipstack-validate --list: $got"
got=$(run "$dev" sh -c 'pkg-config --modversion hipstack-smi && test -f /opt/hipstack/lib/cmake/hipstack-smi/hipstack-smi-config.cmake && test -f /opt/hipstack/include/hipstack-hip/hip/hip_runtime.h && echo found' 2>&1 || true)
[ "$(printf '%s\n' "$got" | head -1)" = "$version" ] && grep -x found <<<"$got" >/dev/null &&
  pass "libhipstack-smi's pkg-config and CMake files, the HIP portability headers" || fail "dev files: $got"

[ $failures -eq 0 ] && echo "PASS: the images of release $version"
[ $failures -eq 0 ]
