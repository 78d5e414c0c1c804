#!/usr/bin/env bash
# The porting path the ROCm documentation promises, with the current ROCm set (7.2.4, issue 18) in
# its own Debian sid root (tests/lib/rocm_root.sh, hip-7.packages):
#   1. saxpy.cu (CUDA) through hipify-perl: no CUDA name is left;
#   2. hipcc builds it for gfx942 (MI300X/MI325X), gfx950 (MI350), gfx90a (MI200), gfx1100 (RDNA3)
#      and gfx1200 (RDNA4), and the fat binary holds one code object for each
#      (clang-offload-bundler --list on its .hip_fatbin section);
#   3. hipstack's validation kernels (validation/kernels) build the same way; each one with device
#      code holds the five code objects (transfer has none: copies only).
# No GPU is needed (nothing runs on one).
#   test_porting.sh CACHE_DIR WORK_DIR
# Exit 0 pass, 1 fail, 77 skip (see rocm_root.sh).
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: test_porting.sh CACHE_DIR WORK_DIR" >&2; exit 2; }
cache=$1 work=$2
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
root=$work/root
targets=(gfx942 gfx950 gfx90a gfx1100 gfx1200)
rc=0; "$top/tests/lib/rocm_root.sh" "$here/hip-7.packages" "$cache" "$root" || rc=$?
[ $rc = 0 ] || exit $rc
cleanup() { umount "$root/proc" 2>/dev/null || true; }
trap cleanup EXIT
mount -t proc proc "$root/proc"
failures=0
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root sh -c "$1"; }
bundler=$(in_root 'ls /usr/lib/llvm-*/bin/clang-offload-bundler | tail -1')
objcopy=$(dirname "$bundler")/llvm-objcopy
arch_flags=$(printf -- '--offload-arch=%s ' "${targets[@]}")
# code_objects BINARY: the sorted amdgcn targets its .hip_fatbin bundles
code_objects() {
  in_root "cd /srv && $objcopy --dump-section .hip_fatbin=$1.fatbin $1 2>/dev/null && $bundler --list --type=o --input=$1.fatbin" |
    sed -n 's/^hipv4-amdgcn-amd-amdhsa--//p' | sort | tr '\n' ' '
}
want=$(printf '%s\n' "${targets[@]}" | sort | tr '\n' ' ')

rm -rf "$root/srv" && mkdir -p "$root/srv"
cp "$here/saxpy.cu" "$root/srv/"
echo "== hipify-perl, then hipcc $(in_root 'hipcc --version 2>/dev/null | head -1') for ${targets[*]}"
in_root "cd /srv && hipify-perl saxpy.cu > saxpy.hip" && [ -s "$root/srv/saxpy.hip" ] && pass "hipify-perl saxpy.cu" || fail "hipify-perl"
left=$(grep -o '\bcuda[A-Za-z_]*\|cuda_runtime' "$root/srv/saxpy.hip" | sort -u | tr '\n' ' ')
[ -z "$left" ] && grep -q 'hipMalloc' "$root/srv/saxpy.hip" && pass "no CUDA name left (hipMalloc, hipDeviceSynchronize, ...)" ||
  fail "CUDA names left in saxpy.hip: ${left:-none, but no hipMalloc either}"
if in_root "cd /srv && hipcc $arch_flags -O2 saxpy.hip -o saxpy" > "$work/saxpy.log" 2>&1; then
  got=$(code_objects saxpy)
  [ "$got" = "$want" ] && pass "saxpy holds code objects for $got" || fail "saxpy's code objects: '$got', wanted '$want'"
else
  fail "hipcc saxpy.hip: $(tail -5 "$work/saxpy.log")"
fi

echo "== hipstack's validation kernels"
cp -r "$top/validation/kernels" "$root/srv/kernels"
for kernel in vector_add stream transfer gemm memtest stress p2p; do
  if ! in_root "cd /srv/kernels && hipcc $arch_flags -O2 -std=c++20 $kernel.hip -o $kernel" > "$work/$kernel.log" 2>&1; then
    fail "hipcc $kernel.hip: $(tail -5 "$work/$kernel.log")"
    continue
  fi
  got=$(code_objects "kernels/$kernel")
  if ! grep -q '__global__' "$root/srv/kernels/$kernel.hip"; then
    [ -z "$got" ] && pass "$kernel builds (no device code, no code objects)" || fail "$kernel has no kernel but code objects '$got'"
  else
    [ "$got" = "$want" ] && pass "$kernel holds code objects for $got" || fail "$kernel's code objects: '$got', wanted '$want'"
  fi
done
echo "# $failures failure(s)"
[ $failures = 0 ]
