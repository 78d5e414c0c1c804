#!/usr/bin/env bash
# The AMD binary components of the superbuild (docs/superbuild.md), staged from Debian's ROCm 5.2.3
# .debs: a HIP program compiled with the prefix's hipcc for gfx90a holds gfx90a code and loads the
# prefix's HIP/HSA libraries (not /usr/lib's), so does the prefix's libamdhip64, and the prefix's
# rocminfo gives its "no GPU" answer (or lists the GPU where /dev/kfd exists).
#   test_amd_prefix.sh SOURCE_ROOT WORK_DIR DOWNLOAD_DIR
# Exit 77 (skip) when the .debs are neither cached in DOWNLOAD_DIR nor downloadable.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: test_amd_prefix.sh SOURCE_ROOT WORK_DIR DOWNLOAD_DIR" >&2; exit 2; }
root=$(realpath "$1") work=$2 downloads=$3
here=$(dirname "$(realpath "$0")")
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$work" "$downloads"; work=$(realpath "$work"); downloads=$(realpath "$downloads")
rm -rf "$work/stage" "$work/build"

# hipcc and everything it depends on: the HIP runtime, HSA runtime and thunk, comgr, device libraries, rocminfo.
if ! { cmake -S "$root/superbuild" -B "$work/build" -G Ninja -DHIPSTACK_SUPERBUILD_COMPONENTS=hipcc \
             -DHIPSTACK_DOWNLOAD_DIR="$downloads" && cmake --build "$work/build"; } > "$work/superbuild.log" 2>&1; then
  if grep -q "apt-get download .* failed" "$work/superbuild.log" &&
     ! (cd "$(mktemp -d)" && timeout 60 apt-get download -q libhiprtc-builtins5 >/dev/null 2>&1); then
    echo "SKIP: Debian's archive is unreachable and the .debs are not cached in $downloads"
    exit 77
  fi
  cat "$work/superbuild.log"
  fail "the superbuild of hipcc and its dependencies"
fi
manifest=$work/stage/manifest.json
prefix=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["prefix"])' "$manifest")
p=$work/stage$prefix
python3 - "$manifest" <<'EOF' || fail "stage/manifest.json"
import json, sys
c = json.load(open(sys.argv[1]))["components"]
want = {"hipcc", "hip-runtime", "rocr-runtime", "roct-thunk", "comgr", "rocm-device-libs", "rocminfo",
        "clang-15", "hipcc-tools", "rocm-system-libs", "rocminfo-tools"}
assert set(c) == want, sorted(c)
for name, comp in c.items():
    if comp["kind"] == "binary":
        assert comp["files_count"] > 0 and all(len(d["sha256"]) == 64 for d in comp["origin"]["debs"]), name
EOF

# Compile: the prefix's hipcc, clang 15 from the system, the prefix's headers and device libraries
# (HIPCC_VERBOSE=3 prints the paths hipcc.pl uses and its clang command).
HIPCC_VERBOSE=3 "$p/bin/hipcc" --offload-arch=gfx90a -O2 "$here/saxpy.hip" -o "$work/saxpy" > "$work/hipcc.log" 2>&1 ||
  { cat "$work/hipcc.log"; fail "hipcc --offload-arch=gfx90a"; }
grep -qx "HIP_PATH=$p" "$work/hipcc.log" && grep -qx "DEVICE_LIB_PATH=$p/amdgcn/bitcode" "$work/hipcc.log" &&
  grep -qx "HIP_CLANG_PATH=/usr/lib/llvm-15/bin" "$work/hipcc.log" || { cat "$work/hipcc.log"; fail "hipcc's paths"; }
# The fat binary: gfx90a code, and no other GPU target.
"$p/bin/roc-obj-ls" "$work/saxpy" > "$work/roc-obj-ls.txt" 2>&1 || { cat "$work/roc-obj-ls.txt"; fail "roc-obj-ls"; }
grep -q "hipv4-amdgcn-amd-amdhsa--gfx90a" "$work/roc-obj-ls.txt" || { cat "$work/roc-obj-ls.txt"; fail "no gfx90a code object"; }
[ "$(grep -c amdgcn-amd-amdhsa "$work/roc-obj-ls.txt")" = 1 ] || { cat "$work/roc-obj-ls.txt"; fail "unexpected code objects"; }

# ldd: the HIP and HSA libraries resolve inside the prefix, for the program and for libamdhip64 itself.
resolves_in_prefix() {  # FILE LIB...
  local file=$1 lib line; shift
  ldd "$file" > "$work/ldd.txt" || fail "ldd $file"
  for lib in "$@"; do
    line=$(grep -E "^[[:space:]]*$lib => " "$work/ldd.txt") || { cat "$work/ldd.txt"; fail "$file does not load $lib"; }
    [[ $line == *"=> $p/lib/$lib "* || $line == *"=> $p/bin/../lib/$lib "* ]] ||
      { cat "$work/ldd.txt"; fail "$file loads $lib from outside the prefix: $line"; }
  done
}
resolves_in_prefix "$work/saxpy" libamdhip64.so.5 libhsa-runtime64.so.1 libhsakmt.so.1
resolves_in_prefix "$p/lib/libamdhip64.so.5" libhsa-runtime64.so.1 libhsakmt.so.1
resolves_in_prefix "$p/bin/rocminfo" libhsa-runtime64.so.1 libhsakmt.so.1
# libamdhip64 dlopens comgr by name: its RUNPATH must point at its own folder.
readelf -d "$p/lib/libamdhip64.so.5" | grep 'Library runpath: \[\$ORIGIN\]' >/dev/null || fail "libamdhip64's RUNPATH is not \$ORIGIN"

# The program: 0 on an AMD GPU, 77 without one; never a crash or a failed check.
set +e; "$work/saxpy" > "$work/saxpy.txt" 2>&1; rc=$?; set -e
case $rc in
  0|77) echo "saxpy (exit $rc): $(cat "$work/saxpy.txt")" ;;
  *) cat "$work/saxpy.txt"; fail "saxpy exited $rc" ;;
esac

# rocminfo from the prefix.
set +e; "$p/bin/rocminfo" > "$work/rocminfo.txt" 2>&1; rc=$?; set -e
if [ -e /dev/kfd ]; then
  [ $rc = 0 ] && grep -q "Name:.*gfx" "$work/rocminfo.txt" || { cat "$work/rocminfo.txt"; fail "rocminfo on a machine with /dev/kfd"; }
else
  [ $rc = 1 ] && grep -q "ROCk module is NOT loaded, possibly no GPU devices" "$work/rocminfo.txt" ||
    { cat "$work/rocminfo.txt"; fail "rocminfo without a GPU exited $rc"; }
fi
echo "rocminfo (exit $rc): $(grep -m 1 -e ROCk -e 'Name:' "$work/rocminfo.txt" | sed 's/\x1b\[[0-9;]*m//g')"
echo "PASS: the AMD prefix compiles for gfx90a and loads its own runtime"
