#!/usr/bin/env bash
# The current track's release as its users meet it (issue 18, docs/superbuild.md), from what
# `superbuild/build.sh --track current OUTDIR` left:
#   - every package of the track's manifest as .deb and .rpm, named with the release (X.Y.Z-rocm7.2);
#     the signed repositories verify;
#   - in a fresh chroot of the track's distribution (Debian sid; its own archive only, no
#     experimental: every ROCm file comes from our packages): the apt repository added as users do,
#     `apt-get install hipstack`; /opt/hipstack is the track's prefix;
#   - hipcc --offload-arch=gfx942 builds a HIP program whose fat binary holds gfx942 code and which
#     loads the prefix's libamdhip64 7; a CUDA source through the track's hipify-perl builds the same
#     way (the porting path); hipconfig --version is the track's HIP (7.2); rocminfo gives its "no GPU"
#     answer through the prefix's HSA runtime; rocm-smi is the track's;
#   - hipstack-validate --list lists the kernels, and each kernel with device code holds a code object
#     for every target of the track (gfx942, gfx950, gfx90a, gfx1100, gfx1200);
#   - hipstack-smi and hipstack-info read the MI300X capture; purge leaves no file of ours.
#   test_track_release.sh OUTDIR CAPTURE_SYS_DIR CACHE_DIR
# Exit 0 pass, 1 fail, 77 skip (not root, a tool missing, no network for debootstrap).
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: test_track_release.sh OUTDIR CAPTURE_SYS_DIR CACHE_DIR" >&2; exit 2; }
out=$(realpath "$1") capture=$(realpath "$2") cache=$3
here=$(dirname "$(realpath "$0")")
top=$(realpath "$here/../..")
skip() { echo "SKIP: $1"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, mount)"
for tool in debootstrap gpgv python3 flock; do
  command -v "$tool" >/dev/null || skip "$tool is not installed"
done
manifest=$out/stage/manifest.json
[ -f "$manifest" ] && [ -f "$out/packages/.done" ] || { echo "FAIL: $out holds no finished superbuild (run superbuild/build.sh --track current $out)"; exit 1; }
read -r v release track prefix < <(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["version"], m["release"], m["track"], m["prefix"])' "$manifest")
[ "$track" = current ] || { echo "FAIL: $out holds track '$track', not current"; exit 1; }
suite=$(python3 "$top/superbuild/scripts/tracks.py" "$top/superbuild/components.json" field current suite)
read -r -a targets <<< "$(python3 "$top/superbuild/scripts/tracks.py" "$top/superbuild/components.json" field current amdgpu_targets)"
rocm=$(python3 "$top/superbuild/scripts/tracks.py" "$top/superbuild/components.json" field current rocm)
pkgs=$out/packages
# shellcheck source=../lib/checks.sh
source "$here/../lib/checks.sh"
# shellcheck source=../lib/release_packages.sh
source "$here/../lib/release_packages.sh"
# shellcheck source=../../scripts/lib/debian_chroot.sh
source "$top/scripts/lib/debian_chroot.sh"
# shellcheck source=../lib/apt_repo.sh
source "$top/tests/lib/apt_repo.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/hipstack-track-test.XXXXXX")
root=$work/root
cleanup() {
  debian_chroot_umount "$root"
  rm -rf "$work"
  echo "# $failures failure(s)"
}
trap cleanup EXIT

echo "== the packages of release $release (track $track)"
release_packages_check "$manifest" "$pkgs" "the track"
for p in hipstack "hipstack-smi-lib$release" "hipstack-amd-runtime$release" "hipstack-amd-compiler$release" "hipstack-validation$release"; do
  [[ " ${names[*]} " == *" $p "* ]] || fail "the track makes no package $p"
done
[ "$prefix" = "/opt/hipstack-$release" ] && [[ $release == "$v"-rocm* ]] && pass "release $release, prefix $prefix" ||
  fail "release '$release', prefix '$prefix'"
apt_repo=$out/repo/apt
check "apt: InRelease verifies with the published key" gpgv --keyring "$apt_repo/hipstack.gpg" "$apt_repo/dists/stable/InRelease"
check "dnf: repomd.xml.asc verifies" gpgv --keyring "$apt_repo/hipstack.gpg" "$out/repo/dnf/repodata/repomd.xml.asc" "$out/repo/dnf/repodata/repomd.xml"

echo "== apt-get install hipstack in a fresh Debian $suite chroot"
base=$(debian_chroot_base "$cache" "$suite") || skip "debootstrap $suite failed (no network to deb.debian.org?)"
debian_chroot_unpack "$base" "$root" own
# The archive served here is a snapshot whose Release files are past Valid-Until (this root only).
echo 'Acquire::Check-Valid-Until "false";' > "$root/etc/apt/apt.conf.d/99snapshot"
mkdir -p "$root/srv/hipstack-apt" "$root/srv/capture"
mount --bind -o ro "$apt_repo" "$root/srv/hipstack-apt"
cp -r "$capture"/. "$root/srv/capture/"
cp "$here/saxpy.hip" "$top/tests/current/saxpy.cu" "$root/srv/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive sh -c "$1"; }
in_root "apt-get update -qq && apt-get install -y -qq ca-certificates >/dev/null"
before=$(in_root "find / -xdev \( -path /proc -o -path /srv -o -path /tmp -o -path /var/log -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg \) -prune -o -print" | sort)
hipstack_apt_source "$root" "$apt_repo/hipstack.gpg" file:///srv/hipstack-apt
rc=0; in_root "apt-get update" > "$work/update.out" 2>&1 || rc=$?
[ $rc = 0 ] && ! grep '^\(W\|E\|Err\):' "$work/update.out" >/dev/null && pass "apt-get update: our repository verified, no warning" ||
  { fail "apt-get update (rc=$rc)"; cat "$work/update.out"; }
if in_root "apt-cache policy" | grep -q experimental; then fail "the chroot has experimental in its sources"; fi
start=$(date +%s)
rc=0; in_root "apt-get install -y -q hipstack" > "$work/install.out" 2>&1 || rc=$?
[ $rc = 0 ] && pass "apt-get install hipstack ($(( $(date +%s) - start )) s)" || { fail "apt-get install hipstack (rc=$rc)"; tail -30 "$work/install.out"; }
for p in "hipstack-smi-cli$release" "hipstack-monitor$release" "hipstack-validation$release" "hipstack-amd-runtime$release" \
         "hipstack-amd-compiler$release" "hipstack-amd-libs$release" "hipstack-smi-dev$release" "hipstack-amd-runtime-dev$release" \
         "hipstack-amd-libs-dev$release"; do
  [ "$(in_root "dpkg-query -W -f='\${Status}' $p" 2>/dev/null)" = "install ok installed" ] && pass "installed: $p" || fail "not installed: $p"
done
# No ROCm of the distribution's own came with it: every ROCm file is the prefix's.
system_rocm=$(in_root "dpkg-query -W -f='\${Package}\n'" | grep -E '^(libamdhip64|libhsa-runtime64|libamd-comgr|rocm-device-libs|hipcc$|rocminfo$)' || true)
[ -z "$system_rocm" ] && pass "no ROCm package of the distribution installed" || fail "the distribution's ROCm came along: $system_rocm"
[ "$(in_root "readlink -f /opt/hipstack")" = "$prefix" ] && pass "/opt/hipstack is $prefix" || fail "/opt/hipstack: $(in_root "readlink -f /opt/hipstack")"

# The track's libraries (HIP, rocBLAS, hipBLAS, rocSOLVER, RCCL, MIOpen, ...) resolve every library
# they need: the prefix's or the distribution's that our packages depend on.
for lib in libamdhip64.so.7 librocblas.so.5 libhipblas.so.3 librocsolver.so.0 librccl.so.1 libMIOpen.so.1 librocm_smi64.so.7; do
  [ -e "$root$prefix/lib/$lib" ] || fail "$prefix/lib/$lib is not installed"
done
unresolved=$(in_root "for f in $prefix/lib/*.so.*; do ldd \$f | grep -F 'not found' | sed \"s|^|\$f: |\"; done" | sort -u)
[ -z "$unresolved" ] && pass "every library of $prefix/lib resolves what it needs (rocBLAS 5, hipBLAS 3, RCCL 1, MIOpen 1, ...)" ||
  fail "unresolved: $(head -5 <<<"$unresolved")"

echo "== the compiler: hipcc for gfx942, hipify-perl, hipconfig"
bundler=$(in_root 'ls /usr/lib/llvm-*/bin/clang-offload-bundler 2>/dev/null | tail -1')
objcopy=$(dirname "$bundler")/llvm-objcopy
# code_objects BINARY: the amdgcn targets its .hip_fatbin bundles, sorted, space-separated
code_objects() {
  in_root "$objcopy --dump-section .hip_fatbin=/tmp/fatbin '$1' 2>/dev/null && $bundler --list --type=o --input=/tmp/fatbin" |
    sed -n 's/^hipv4-amdgcn-amd-amdhsa--//p' | sort | tr '\n' ' ' | sed 's/ $//'
}
rc=0; in_root "/opt/hipstack/bin/hipcc --offload-arch=gfx942 -O2 /srv/saxpy.hip -o /srv/saxpy" > "$work/hipcc.out" 2>&1 || rc=$?
[ $rc = 0 ] && pass "/opt/hipstack/bin/hipcc --offload-arch=gfx942" || { fail "hipcc (rc=$rc)"; cat "$work/hipcc.out"; }
got=$(code_objects /srv/saxpy)
[ "$got" = gfx942 ] && pass "the program holds gfx942 code (clang-offload-bundler --list)" || fail "saxpy's code objects: '$got'"
got=$(in_root "ldd /srv/saxpy" 2>&1 || true)
grep -E "libamdhip64.so.7 => $prefix/lib/libamdhip64.so.7" <<<"$got" >/dev/null && pass "it loads $prefix/lib/libamdhip64.so.7" || fail "ldd: $got"
rc=0; got=$(in_root "/srv/saxpy" 2>&1) || rc=$?
[ $rc = 77 ] && pass "it runs and says: $got (exit 77)" || fail "saxpy without a GPU: rc=$rc $got"
rc=0; in_root "cd /srv && /opt/hipstack/bin/hipify-perl saxpy.cu > saxpy_ported.hip && /opt/hipstack/bin/hipcc --offload-arch=gfx942 -O2 saxpy_ported.hip -o saxpy_ported" > "$work/port.out" 2>&1 || rc=$?
left=$(grep -o '\bcuda[A-Za-z_]*' "$root/srv/saxpy_ported.hip" 2>/dev/null | sort -u | tr '\n' ' ')
[ $rc = 0 ] && [ -z "$left" ] && [ "$(code_objects /srv/saxpy_ported)" = gfx942 ] &&
  pass "a CUDA source through the track's hipify-perl builds for gfx942" || { fail "hipify-perl + hipcc (rc=$rc, CUDA names left: '$left')"; tail -5 "$work/port.out"; }
got=$(in_root "/opt/hipstack/bin/hipconfig --version" 2>&1 || true)
[[ $got == "${rocm%.*}".* ]] && pass "hipconfig --version: $got (ROCm $rocm)" || fail "hipconfig --version: '$got', wanted ${rocm%.*}.*"
rc=0; got=$(in_root "/opt/hipstack/bin/rocminfo" 2>&1) || rc=$?
hsa=$(in_root "ldd /opt/hipstack/bin/rocminfo" | awk '/libhsa-runtime64/ { print $3 }')
[ $rc = 1 ] && grep "ROCk module is NOT loaded" <<<"$got" >/dev/null && [ "$(in_root "readlink -f $hsa")" = "$prefix/lib/libhsa-runtime64.so.1.18.0" ] &&
  pass "rocminfo: exit 1, \"ROCk module is NOT loaded\", through $prefix's HSA runtime 1.18 (ROCm 7.2)" || fail "rocminfo: rc=$rc hsa=$hsa $got"
# Without a GPU, rocm-smi 7 loads its library and then stops at "Driver not initialized"; a library
# it cannot find says "Unable to find librocm_smi64.so.7" instead.
got=$(in_root "/opt/hipstack/bin/rocm-smi --version" 2>&1 || true)
grep -q "Driver not initialized" <<<"$got" && ! grep -q "Unable to find" <<<"$got" &&
  in_root "/opt/hipstack/bin/rocm-smi --help" | grep -q -- --showmetrics &&
  pass "rocm-smi 7 (--showmetrics) runs from the prefix and loads its librocm_smi64.so.7" || fail "rocm-smi: $got"

echo "== hipstack on the track"
got=$(in_root "/opt/hipstack/bin/hipstack-validate --list" 2>&1 || true)
grep -w gemm <<<"$got" >/dev/null && grep -w stream <<<"$got" >/dev/null && pass "hipstack-validate --list lists the kernels" ||
  fail "hipstack-validate --list: $(head -10 <<<"$got")"
want=$(printf '%s\n' "${targets[@]}" | sort | tr '\n' ' ' | sed 's/ $//')
kernels=0
for k in "$root$prefix"/libexec/hipstack/validation/*; do
  name=$(basename "$k")
  got=$(code_objects "$prefix/libexec/hipstack/validation/$name")
  [ -z "$got" ] && [ "$name" = transfer ] && continue  # copies only: no device code
  kernels=$((kernels + 1))
  [ "$got" = "$want" ] || fail "validation kernel $name holds '$got', wanted '$want'"
done
[ $kernels -ge 6 ] && pass "$kernels validation kernels hold code for $want" || fail "only $kernels validation kernels with device code"
got=$(in_root "/opt/hipstack/bin/hipstack-smi version" 2>&1 || true)
grep -F "$v" <<<"$got" >/dev/null && pass "hipstack-smi version: $v" || fail "hipstack-smi version: $got"
got=$(in_root "/opt/hipstack/bin/hipstack-smi list --sysfs-root /srv/capture" 2>&1 || true)
[ "$(grep -c 'AMD Instinct MI300X' <<<"$got")" = 8 ] && pass "hipstack-smi list --sysfs-root: the capture's 8 MI300X" || fail "hipstack-smi list: $got"
got=$(in_root "/opt/hipstack/bin/hipstack-info --no-checks --sysfs-root /srv/capture" 2>&1 || true)
[ "$(grep -c 'gfx942' <<<"$got")" -ge 8 ] && pass "hipstack-info --sysfs-root: gfx942 agents" || fail "hipstack-info on the capture: $(head -20 <<<"$got")"
got=$(in_root "/opt/hipstack/sbin/hipstack-smid --once --grpc-listen off --sysfs-root /srv/capture" 2>&1 || true)
grep "^hipstack_smid_build_info{version=\"$v\"" <<<"$got" >/dev/null && pass "hipstack-smid --once: build_info $v" || fail "hipstack-smid --once: $(tail -3 <<<"$got")"

echo "== purge"
in_root "dpkg-query -W -f='\${Package}\n' 'hipstack*' 'python3-hipstack*'" > "$work/ours"
files_of_ours=$(while read -r p; do in_root "dpkg -L $p"; done < "$work/ours" | sort -u)
in_root "apt-get purge -y -q --autoremove $(tr '\n' ' ' < "$work/ours")" > "$work/purge.out" 2>&1 || { fail "apt-get purge"; tail -20 "$work/purge.out"; }
left=$(while IFS= read -r f; do
         [ -n "$f" ] && [ ! -d "$root$f" ] && { [ -e "$root$f" ] || [ -L "$root$f" ]; } && echo "$f"
       done <<<"$files_of_ours" || true)
[ -z "$left" ] && pass "no file of ours left ($(wc -l <<<"$files_of_ours") paths checked)" || fail "left after purge: $(head -5 <<<"$left")"
rm "$root/etc/apt/sources.list.d/hipstack.sources" "$root/etc/apt/keyrings/hipstack.gpg"
after=$(in_root "find / -xdev \( -path /proc -o -path /srv -o -path /tmp -o -path /var/log -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg \) -prune -o -print" | sort)
named=$(comm -13 <(echo "$before") <(echo "$after") | grep -e hipstack -e '^/opt/' || true)
[ -z "$named" ] && pass "no path named hipstack, nothing in /opt" || fail "left after purge: $(head -10 <<<"$named")"

[ $failures -eq 0 ] && echo "PASS: release $release from $out"
[ $failures -eq 0 ]
